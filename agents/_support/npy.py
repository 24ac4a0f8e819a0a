"""Arrays read from an ``.npz`` archive without pickle and without trusting it: each member's ``.npy`` header
(dtype, shape, order) is checked against what the format expects before a byte of data is read, and no member
is read past the bytes its checked header needs, whatever the zip declares.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from typing import IO

import numpy as np

__all__ = ["ARCHIVE_ERRORS", "npy_header", "read_npy", "peek_npy"]

# what reading a damaged or hostile archive raises besides ValueError: callers turn these into "corrupt or
# truncated", naming the file
ARCHIVE_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,  # a bad deflate stream
    EOFError,
    OSError,
    json.JSONDecodeError,
    KeyError,
    UnicodeDecodeError,
    RuntimeError,  # an encrypted member
    NotImplementedError,  # a compression method zipfile does not have
)


def npy_header(member: IO[bytes], name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """The shape, order and dtype in the ``.npy`` header of the member ``name``.

    Raises:
        ValueError: the header is damaged or cut short (named; numpy's own words kept after it).
    """
    try:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(member, max_header_size=10_000)
        if version == (2, 0):
            return np.lib.format.read_array_header_2_0(member, max_header_size=10_000)
    except ValueError as error:  # numpy's "EOF: reading array header, expected 118 bytes got 58", ...
        raise ValueError(
            f"{name} is damaged or truncated: its array header cannot be read ({error})"
        ) from None
    raise ValueError(f"{name}: npy format version {version} is not supported")


def read_npy(archive: zipfile.ZipFile, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The array of member ``name``, which must be ``dtype`` of ``shape`` in C order.

    Raises:
        ValueError: its header disagrees, or the member holds fewer bytes than the array needs.
    """
    with archive.open(name) as member:
        found_shape, fortran, found_dtype = npy_header(member, name)
        if found_shape != shape or found_dtype != dtype or fortran:
            raise ValueError(
                f"array {name[:-4]!r} is {found_dtype} {found_shape}{' (Fortran order)' if fortran else ''}; "
                f"expected {dtype} {shape}"
            )
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        data = member.read(expected)
    if len(data) != expected:  # checked before numpy reads it: a cut mid-value is numpy's "buffer size" error
        raise ValueError(
            f"{name} is damaged or truncated: its array {name[:-4]!r} ({dtype} {shape}) needs {expected:,} bytes "
            f"of data, the file holds {len(data):,}"
        )
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def peek_npy(archive: zipfile.ZipFile, name: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype that member ``name`` declares, read from its header alone.

    Raises:
        ValueError: the header is damaged, or declares Fortran order.
    """
    with archive.open(name) as member:
        shape, fortran, dtype = npy_header(member, name)
    if fortran:
        raise ValueError(f"array {name[:-4]!r} is stored in Fortran order")
    return shape, dtype
