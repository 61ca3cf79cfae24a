"""`harness crosscheck`: the harness against nvbench on the same closures, one GPU, one process.

command  the command: compose the preset, run the points, store and print the table
measure  the harness side of a point: measure_point (check, default protocol), then the matched
         protocol on the same closure
nvbench  cuda-bench in this process (the API facts it relies on are in its docstring)
table    one table row per point, and its markdown; explain: why two timings differ
"""
