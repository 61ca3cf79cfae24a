"""`harness list [--op OP] [--device DEVICE]`: every provider, and whether it runs here."""

from __future__ import annotations

from harness.cliargs import Parser
from harness.commands.runargs import prepare_environment


def main(args: list[str]) -> int:
    from tabulate import tabulate

    from harness.device import get_device
    from harness.problems import PROBLEM_TYPES
    from harness.providers import load_all

    parser = Parser("list", "Every provider, and whether it runs on this machine (or why not).")
    parser.add_argument("--op", choices=sorted(PROBLEM_TYPES), help="only this op's providers")
    parser.add_argument(
        "--device", default="auto", help="auto, cpu, cuda:N, xpu:N (default: %(default)s)"
    )
    ns = parser.parse_args(args)
    prepare_environment(ns.device)
    device = get_device(ns.device)
    rows = []
    for p in load_all():
        if ns.op and p.op != ns.op:
            continue
        why = p.why_unavailable(device)
        rows.append(
            [
                p.op,
                p.name,
                p.family,
                "/".join(p.vendors),
                "available" if why is None else f"unavailable: {why}",
                p.description,
            ]
        )
    print(f"device: {device.type}:{device.index} {device.name} ({device.vendor}, {device.arch})")
    print(
        tabulate(
            rows,
            headers=["op", "provider", "family", "vendors", "on this machine", "what"],
            tablefmt="github",
        )
    )
    return 0
