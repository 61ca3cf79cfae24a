"""One module per `harness <command>`, each with `main(args) -> int`: the arguments are parsed
here, at the edge (harness.cliargs.Parser, one key=value style and one help style), and the
work is done by typed functions of the layers below. harness.cli only dispatches."""
