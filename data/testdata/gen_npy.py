#!/usr/bin/python3
"""Writes the small .npy golden files data/npy_test.go reads (numpy >= 1.17).

Run from the repository root: /usr/bin/python3 data/testdata/gen_npy.py
"""
import math
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(here, name)


f4_2d = (np.arange(6, dtype='<f4').reshape(3, 2) * 0.5 - 1).astype('<f4')
np.save(path('f4_2d.npy'), f4_2d)
np.save(path('f8_1d.npy'), np.array([1.5, -2.25, 1e-300, math.pi], dtype='<f8'))
with open(path('f4_2d_v2.npy'), 'wb') as f:
    np.lib.format.write_array(f, f4_2d, version=(2, 0))
with open(path('f4_2d_v3.npy'), 'wb') as f:
    np.lib.format.write_array(f, f4_2d, version=(3, 0))
np.save(path('fortran.npy'), np.asfortranarray(np.arange(6, dtype='<f8').reshape(2, 3)))
np.save(path('bigendian.npy'), np.arange(4, dtype='>f4'))
np.save(path('int64.npy'), np.arange(4, dtype='<i8'))
np.save(path('f8_3d.npy'), np.zeros((2, 2, 2), dtype='<f8'))
