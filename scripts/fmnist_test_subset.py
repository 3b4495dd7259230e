#!/usr/bin/env python3
"""Write the first N Fashion-MNIST test images (Debian's dataset-fashion-mnist, MIT licence) as one IDX
file for models/models_test.go, so that the shipped-model checks need no data package:
    python3 scripts/fmnist_test_subset.py /usr/share/datasets/fashion-mnist 500 models/testdata/fmnist-t10k-500-images-idx3-ubyte.gz
"""
import gzip
import struct
import sys

src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with gzip.open(src + "/t10k-images-idx3-ubyte.gz", "rb") as f:
    magic, count, rows, cols = struct.unpack(">IIII", f.read(16))
    assert magic == 0x803 and n <= count, (magic, count)
    pix = f.read(n * rows * cols)
with gzip.GzipFile(out, "wb", mtime=0) as f:
    f.write(struct.pack(">IIII", magic, n, rows, cols))
    f.write(pix)
