"""`harness-cluster`: Hydra's own entry point, so a sweep can go through a Hydra launcher.

With `-m hydra/launcher=slurm` (configs/hydra/launcher/) and `shard_index=range(N)`, Hydra's
submitit launcher sends one job per shard; each job measures its share (and, with devices=all,
shares it again over its node's GPUs) into the one run named by run_id. `harness run` stays the
command for a single machine; both end in harness.runner.run_sweep.
"""

from __future__ import annotations

import os

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from harness.children import SAFE_ENV
from harness.config import CONFIG_DIR


@hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    from harness.plan import run_plan
    from harness.runner import run_sweep

    os.environ.update(SAFE_ENV)
    if cfg.run_id is None:
        # Jobs on different hosts must write into one run: a per-job default would split it.
        raise ValueError("run_id: required for cluster runs; allowed: any name, e.g. run_id=study1")
    if str(cfg.device).startswith("cpu") or cfg.devices in ("cpu", ["cpu"]):
        os.environ.setdefault("TRITON_INTERPRET", "1")
    overrides = list(HydraConfig.get().overrides.task)
    result = run_sweep(run_plan(cfg), overrides=overrides)
    print(
        f"shard {cfg.shard_index}/{cfg.shard_count}: {result.measured} measured, "
        f"{result.already_done} already done, into {result.run_path}"
    )


if __name__ == "__main__":
    main()
