"""Make the example's two 96x96 RGB pictures (binary PPM), drawn with numpy, not photographs:
no_person.ppm, an empty landscape (sky over a field), and person.ppm, the same landscape with a
figure standing in it (head, hair, blue top, arms, dark trousers), as a child would draw one.
The MLPerf Tiny VWW model was trained on photographs (COCO); on these two drawings it answers
"no person" and "person".   python make_images.py
"""

from __future__ import annotations

import numpy as np

SIZE = 96
y, x = np.mgrid[0:SIZE, 0:SIZE] / (SIZE - 1.0)


def landscape() -> np.ndarray:
    sky = np.stack([110 + 60 * y, 160 + 60 * y, 230 + 0 * y], -1)
    field = np.stack([70 + 20 * x, 110 + 10 * y, 50 + 0 * x], -1)
    return np.where((y < 0.55)[..., None], sky, field)


def with_figure(img: np.ndarray, cx: float = 0.5) -> np.ndarray:
    img = img.copy()
    skin, shirt = [224, 172, 138], [40, 70, 160]
    head = (y - 0.25) ** 2 + ((x - cx) * 1.2) ** 2 < 0.09 ** 2
    img[head] = skin
    img[head & (y < 0.22)] = [60, 40, 30]  # hair
    img[(np.abs(x - cx) < 0.04) & (y > 0.32) & (y <= 0.34)] = skin  # neck
    img[(np.abs(x - cx) < 0.16) & (y > 0.34) & (y < 0.75)] = shirt
    img[(np.abs(x - cx) > 0.16) & (np.abs(x - cx) < 0.22) & (y > 0.36) & (y < 0.68)] = shirt  # arms
    img[((np.abs(x - cx + 0.08) < 0.06) | (np.abs(x - cx - 0.08) < 0.06)) & (y >= 0.75)] = [50, 50, 60]
    return img


def write_ppm(path: str, img: np.ndarray) -> None:
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (SIZE, SIZE))
        f.write(np.clip(np.round(img), 0, 255).astype(np.uint8).tobytes())


if __name__ == "__main__":
    write_ppm("no_person.ppm", landscape())
    write_ppm("person.ppm", with_figure(landscape()))
    print("wrote no_person.ppm, person.ppm")
