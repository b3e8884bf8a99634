"""A GGUF file's header as Python values, to edit and write back: tests
make files a writer never would (overlapping tensors, odd metadata) from
one tfm-weights wrote. The tensor data is kept as bytes, untouched.

    gguf = GgufEdit.read(path)
    gguf.metadata["llama.rope.dimension_count"] = (GgufEdit.U32, 8)
    gguf.tensors[1]["offset"] = gguf.tensors[0]["offset"]
    gguf.write(other_path)
"""

import struct

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GgufEdit:
    U32, I32, F32, STRING = 4, 5, 6, _STRING

    def __init__(self, metadata, tensors, alignment, data):
        self.metadata = metadata  # key -> (type, value); arrays: (9, (element type, [values]))
        self.tensors = tensors    # [{"name", "dims", "type", "offset"}], file order
        self.alignment = alignment
        self.data = data          # the bytes after the aligned header

    @staticmethod
    def read(path):
        with open(path, "rb") as f:
            raw = f.read()
        pos = 0

        def take(fmt):
            nonlocal pos
            value = struct.unpack_from(fmt, raw, pos)
            pos += struct.calcsize(fmt)
            return value[0]

        def string():
            nonlocal pos
            n = take("<Q")
            pos += n
            return raw[pos - n:pos].decode("utf-8", "surrogateescape")

        def value(kind):
            if kind == _STRING:
                return string()
            if kind == _ARRAY:
                element, n = take("<I"), take("<Q")
                return element, [value(element) for _ in range(n)]
            return take(_SCALARS[kind])

        if raw[:4] != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        pos = 4
        take("<I")  # version
        n_tensors, n_kv = take("<Q"), take("<Q")
        metadata = {}
        for _ in range(n_kv):
            key = string()
            kind = take("<I")
            metadata[key] = (kind, value(kind))
        tensors = []
        for _ in range(n_tensors):
            name = string()
            dims = [take("<Q") for _ in range(take("<I"))]
            tensors.append({"name": name, "dims": dims, "type": take("<I"), "offset": take("<Q")})
        alignment = metadata.get("general.alignment", (4, 32))[1]
        start = (pos + alignment - 1) // alignment * alignment
        return GgufEdit(metadata, tensors, alignment, raw[start:])

    def write(self, path):
        out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.metadata)))

        def string(text):
            data = text.encode("utf-8", "surrogateescape")
            out.extend(struct.pack("<Q", len(data)) + data)

        def value(kind, v):
            if kind == _STRING:
                string(v)
            elif kind == _ARRAY:
                element, items = v
                out.extend(struct.pack("<IQ", element, len(items)))
                for item in items:
                    value(element, item)
            else:
                out.extend(struct.pack(_SCALARS[kind], v))

        for key, (kind, v) in self.metadata.items():
            string(key)
            out.extend(struct.pack("<I", kind))
            value(kind, v)
        for t in self.tensors:
            string(t["name"])
            out.extend(struct.pack("<I", len(t["dims"])))
            out.extend(struct.pack(f"<{len(t['dims'])}Q", *t["dims"]))
            out.extend(struct.pack("<IQ", t["type"], t["offset"]))
        out.extend(b"\0" * (-len(out) % self.alignment))
        with open(path, "wb") as f:
            f.write(bytes(out) + self.data)
