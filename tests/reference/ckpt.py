"""syncwise's checkpoint file, read from its description in include/syncwise/ckpt.h alone.

A checkpoint (format 2, little-endian): magic "SWCK", version, task, classes, input shape,
model version, seed, parameter count P, the model spec, data spec and note (each a u32 length,
then its bytes), P binary32 parameters, the optimizer's spec, steps taken, state arrays A and
their A x P floats, and a CRC-32 of every byte before it.
"""
import struct
import zlib


class Checkpoint:
    pass


class Reader:
    def __init__(self, data, path):
        self.data, self.at, self.path = data, 0, path

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise ValueError("%s: ends inside a field at byte %d" % (self.path, self.at))
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return values if len(values) > 1 else values[0]

    def text(self, longest):
        n = self.take("<I")
        if n > longest:
            raise ValueError("%s: a text of %d bytes at byte %d" % (self.path, n, self.at))
        value = self.data[self.at:self.at + n].decode()
        self.at += n
        return value

    def floats(self, n):
        return list(self.take("<%df" % n)) if n else []


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"SWCK":
        raise ValueError("%s: not a checkpoint" % path)
    (crc,) = struct.unpack_from("<I", data, len(data) - 4)
    if zlib.crc32(data[:-4]) != crc:
        raise ValueError("%s: its CRC-32 does not match" % path)
    r = Reader(data[:-4], path)
    c = Checkpoint()
    r.take("<4s")
    c.format = r.take("<I")
    if c.format != 2:
        raise ValueError("%s: format %d, not 2" % (path, c.format))
    c.task, c.classes = r.take("<II")
    c.shape = r.take("<III")
    c.version, c.seed, n = r.take("<QQQ")
    c.model, c.data, c.note = r.text(127), r.text(1023), r.text(4095)
    c.params = r.floats(n)
    c.optimizer = r.text(95)
    c.optim_steps = r.take("<Q")
    arrays = r.take("<I")
    c.state = [r.floats(n) for _ in range(arrays)]
    if r.at != len(r.data):
        raise ValueError("%s: %d bytes after the state" % (path, len(r.data) - r.at))
    return c
