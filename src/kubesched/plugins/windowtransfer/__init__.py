"""WindowTransfer: bulk-transfer pods only inside a daily window, on nodes with free bandwidth (issue 5)."""

from .args import REJECT, WAIT, WindowTransferArgs
from .plugin import ERR_REASON_BANDWIDTH, WINDOW_OPENED, WindowTransfer
from .window import DailyWindow

__all__ = [
    "ERR_REASON_BANDWIDTH",
    "REJECT",
    "WAIT",
    "WINDOW_OPENED",
    "DailyWindow",
    "WindowTransfer",
    "WindowTransferArgs",
]
