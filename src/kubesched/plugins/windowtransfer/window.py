"""A daily time window in a time zone: when it is open, when it next opens, when it closes.

The window is a wall-clock interval of local time, ``start`` inclusive and ``end`` exclusive; an
``end`` before ``start`` crosses midnight (22:00-06:00 opens on one local day and closes on the
next). Each local day has exactly one opening, so a DST change makes that night's window an hour
longer or shorter, never opens it twice:

* a wall time that occurs twice (clocks go back) means its first occurrence;
* a wall time that is skipped (clocks go forward) means the instant the clocks jump past it.

Only ``zoneinfo`` does the time-zone arithmetic; the caller passes epoch seconds from the
handle's clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

_ONE_DAY = timedelta(days=1)


def parse_hh_mm(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


@dataclass
class DailyWindow:
    start: time
    end: time
    tz: ZoneInfo
    #: ``(from, until, open)``: the window is ``open`` (or closed) for every instant in [from, until).
    _known: tuple[float, float, bool] = field(default=(0.0, 0.0, False), init=False, repr=False)

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M} {self.tz.key}"

    # -- queries --------------------------------------------------------------------------------
    def state(self, now: float) -> tuple[bool, float]:
        """``(True, closes_at)`` inside the window, ``(False, opens_at)`` outside it."""
        lo, hi, is_open = self._known
        if not lo <= now < hi:
            self._known = self._compute(now)
            _, hi, is_open = self._known
        return is_open, hi

    def is_open(self, now: float) -> bool:
        return self.state(now)[0]

    def next_opening(self, now: float) -> float:
        """The first opening strictly after ``now``."""
        for k in range(4):  # a day whose window is skipped entirely is never followed by another
            opens, closes = self.interval(self._local_date(now) + k * _ONE_DAY)
            if opens > now and closes > opens:
                return opens
        raise AssertionError(f"window {self} never opens after {now}")  # pragma: no cover

    def format_instant(self, ts: float) -> str:
        """RFC 3339 in the window's time zone (``2026-03-28T22:00:00+01:00``; ``Z`` for UTC)."""
        text = datetime.fromtimestamp(ts, self.tz).isoformat(timespec="seconds")
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    # -- the arithmetic ---------------------------------------------------------------------------
    def interval(self, day: date) -> tuple[float, float]:
        """The window that opens on local date ``day``: ``(opens_at, closes_at)`` epoch seconds."""
        end_day = day if self.start < self.end else day + _ONE_DAY
        return self._instant(day, self.start), self._instant(end_day, self.end)

    def _compute(self, now: float) -> tuple[float, float, bool]:
        today = self._local_date(now)
        for day in (today - _ONE_DAY, today):
            opens, closes = self.interval(day)
            if opens <= now < closes:
                return opens, closes, True
        return now, self.next_opening(now), False

    def _local_date(self, ts: float) -> date:
        return datetime.fromtimestamp(ts, self.tz).date()

    def _instant(self, day: date, wall: time) -> float:
        local = datetime.combine(day, wall, tzinfo=self.tz)  # fold=0: the first of a repeated time
        ts = local.timestamp()
        if datetime.fromtimestamp(ts, self.tz).replace(tzinfo=None) == local.replace(tzinfo=None):
            return ts
        # Skipped by a jump forward: the wall clock passes ``wall`` at the jump. fold=1 maps the
        # skipped time with the offset after the jump (an instant before it), fold=0 with the one
        # before (an instant after it); bisect between them for the change of offset.
        before, after = local.replace(fold=1).timestamp(), ts
        offset = datetime.fromtimestamp(after, self.tz).utcoffset()
        lo, hi = int(before), int(after)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if datetime.fromtimestamp(mid, self.tz).utcoffset() == offset:
                hi = mid
            else:
                lo = mid
        return float(hi)

