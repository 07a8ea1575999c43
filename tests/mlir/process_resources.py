"""What the test process holds: open file descriptors and resident memory (Linux /proc)."""
import os


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_resident_bytes_of(run) -> int:
    """The peak resident memory while `run()` runs, above what was resident before it."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")                    # resets the peak (VmHWM) to the current size
    before = resident_bytes()
    run()
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM"))
    return peak - before
