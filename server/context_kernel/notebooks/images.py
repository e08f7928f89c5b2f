"""Whether two recorded images show the same thing: decoded pixels compared, with a tolerance.

Replay used to compare plots by MIME type only, so a histogram of changed data matched. Bytes
cannot be compared either: the same picture encodes differently (PNG metadata, compression
level, a renderer's version). So both images are decoded and compared pixel by pixel: a pixel
counts as changed when a channel moves by more than `NOISE_LEVEL` of 255 (anti-aliasing and
colour rounding stay under it), and the images differ when more than `MAX_CHANGED_SHARE` of
the pixels changed (a handful of stray pixels is renderer noise; one histogram bar one count
taller already changes ~0.03% of a 640×480 figure). A different size is a difference.
"""

from __future__ import annotations

import base64
import binascii
import io

from PIL import Image, ImageChops, UnidentifiedImageError

RASTER_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
NOISE_LEVEL = 32
MAX_CHANGED_SHARE = 0.0001
# A recorded figure is a few hundred KB at most; a decompression bomb in a notebook is not ours to expand.
_MAX_PIXELS = 50_000_000


def image_difference(recorded: str | list[str], replayed: str | list[str]) -> str | None:
    """None when the two base64 images look the same, else what differs, for the replay report."""
    before, after = _decode(recorded), _decode(replayed)
    if isinstance(before, str) or isinstance(after, str):
        problem = before if isinstance(before, str) else after
        return None if before == after else f"cannot compare: {problem}"
    if before.size != after.size:
        return f"size {_size(before)} → {_size(after)}"
    bands = ImageChops.difference(before, after).split()
    strongest = bands[0]
    for band in bands[1:]:
        strongest = ImageChops.lighter(strongest, band)
    changed = sum(strongest.histogram()[NOISE_LEVEL + 1:])
    share = changed / (before.size[0] * before.size[1])
    if share <= MAX_CHANGED_SHARE:
        return None
    return f"{share:.2%} of its pixels changed ({changed} of {_size(before)})"


def _decode(data: str | list[str]) -> Image.Image | str:
    """The image as RGB on white (transparency would hide a change), or why it cannot be read."""
    text = "".join(data) if isinstance(data, list) else data
    try:
        raw = base64.b64decode(text)
        with Image.open(io.BytesIO(raw)) as img:
            if img.size[0] * img.size[1] > _MAX_PIXELS:
                return f"an image of {_size(img)} is too large to decode"
            rgba = img.convert("RGBA")
    except (binascii.Error, ValueError, OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        return f"undecodable image ({type(exc).__name__})"
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, rgba).convert("RGB")


def _size(img: Image.Image) -> str:
    return f"{img.size[0]}×{img.size[1]}"
