"""A stream hold that logs instead of holding: the timers' tests check where arm and release
fall among the flush, the events and the call."""

import numpy as np


class LoggingHold:
    def __init__(self, log: list[str]):
        self.log = log

    def arm(self, i: int) -> None:
        self.log.append(f"arm{i}")

    def release(self, i: int) -> None:
        self.log.append(f"release{i}")

    def expired(self, n: int) -> int:
        return int(self.expired_mask(n).sum())

    def expired_mask(self, n: int) -> np.ndarray:
        # one expiry per multi-sample batch, its last sample: the count is reported
        return np.arange(n) == n - 1 if n > 1 else np.zeros(n, dtype=bool)
