"""Replay's image comparison: decoded pixels, tolerant of renderer noise, not of a changed picture."""

from __future__ import annotations

import base64
import io
import random

from PIL import Image, ImageDraw

from context_kernel.notebooks.images import image_difference


def _b64(img: Image.Image, fmt: str = "PNG", **save: object) -> str:
    out = io.BytesIO()
    img.save(out, format=fmt, **save)
    return base64.b64encode(out.getvalue()).decode()


def _bars(heights: list[int]) -> Image.Image:
    img = Image.new("RGB", (320, 240), "white")
    draw = ImageDraw.Draw(img)
    for i, h in enumerate(heights):
        draw.rectangle((20 + i * 30, 220 - h, 40 + i * 30, 220), fill=(31, 119, 180))
    return img


def test_the_same_picture_encoded_differently_matches() -> None:
    img = _bars([50, 80, 120, 60])
    assert image_difference(_b64(img), _b64(img, compress_level=0, optimize=False)) is None
    # Base64 split over lines, as some notebooks store it.
    lines = _b64(img)
    assert image_difference([lines[:100] + "\n", lines[100:]], lines) is None


def test_renderer_noise_is_tolerated() -> None:
    img = _bars([50, 80, 120, 60])
    noisy = img.copy()
    rng = random.Random(1)
    pixels = noisy.load()
    assert pixels is not None
    for x in range(noisy.width):  # anti-aliasing-like shimmer everywhere, under the noise level
        for y in range(noisy.height):
            r, g, b = pixels[x, y]  # type: ignore[misc]
            d = rng.randint(-12, 12)
            pixels[x, y] = (max(0, min(255, r + d)), max(0, min(255, g + d)), max(0, min(255, b + d)))
    pixels[5, 5] = (0, 0, 0)  # and a stray pixel or two
    pixels[300, 10] = (0, 0, 0)
    assert image_difference(_b64(img), _b64(noisy)) is None


def test_a_bar_one_step_taller_is_a_difference() -> None:
    before, after = _bars([50, 80, 120, 60]), _bars([50, 80, 124, 60])
    found = image_difference(_b64(before), _b64(after))
    assert found is not None and "pixels changed" in found and "320×240" in found


def test_a_different_size_or_an_unreadable_image_is_a_difference() -> None:
    img = _bars([50])
    assert image_difference(_b64(img), _b64(img.resize((640, 480)))) == "size 320×240 → 640×480"
    found = image_difference(_b64(img), base64.b64encode(b"not a png").decode())
    assert found is not None and found.startswith("cannot compare: undecodable image")


def test_transparency_does_not_hide_a_change() -> None:
    clear = Image.new("RGBA", (100, 100), (0, 0, 0, 0))
    drawn = clear.copy()
    ImageDraw.Draw(drawn).rectangle((10, 10, 60, 60), fill=(0, 0, 0, 255))
    assert image_difference(_b64(clear), _b64(drawn)) is not None
