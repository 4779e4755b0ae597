"""Byte sizes as the GPU scripts' tables write them: "64 KiB", "1 MiB", "8 B"."""


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} B"
