"""A scheduler command with TransferWindow built in (kube-scheduler's custom ``main``).

Run it like ``kubesched``: ``python my_scheduler.py simulate cluster.yaml --config scheduler-config.yaml``.
"""

from transfer_window import TransferWindow

from kubesched.cli import new_scheduler_command, with_plugin

if __name__ == "__main__":
    new_scheduler_command(with_plugin("TransferWindow", TransferWindow))()
