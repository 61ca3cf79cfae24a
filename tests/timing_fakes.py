"""A stream hold that logs instead of holding: the timers' tests check where arm and release
fall among the flush, the events and the call."""


class LoggingHold:
    def __init__(self, log: list[str]):
        self.log = log

    def arm(self, i: int) -> None:
        self.log.append(f"arm{i}")

    def release(self, i: int) -> None:
        self.log.append(f"release{i}")

    def expired(self, n: int) -> int:
        return 1 if n > 1 else 0  # one expiry per multi-sample batch: the count is reported
