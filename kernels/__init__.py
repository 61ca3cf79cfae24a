"""Kernels under test. Imported as `harness_kernels`; they import nothing from the harness."""
