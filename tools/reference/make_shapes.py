#!/usr/bin/env python3
"""A synthetic segmentation task: squares and discs on a noisy background.

Each sample is a 1 x SIZE x SIZE float image holding one axis-aligned
square and one disc (random sizes and places; the disc is drawn last, so
it covers the square where they overlap) of random brightness on a dark
background, plus Gaussian noise; its mask is SIZE x SIZE classes: 0
background, 1 square, 2 disc. Brightness does not tell the shapes apart
(both draw from the same range): a segmenter must see their form.

Writes OUT/images.npy (float32 [N, 1, SIZE, SIZE]) and OUT/masks.npy
(int32 [N, SIZE, SIZE]). NumPy only (Debian's python3 runs it); seeded, so
every run writes the same files.
"""
import argparse
import os

import numpy as np

CLASSES = 3  # background, square, disc


def draw(rng, size):
    image = np.zeros((size, size), dtype=np.float32)
    mask = np.zeros((size, size), dtype=np.int32)
    rows, cols = np.mgrid[0:size, 0:size]
    side = rng.integers(size // 4, size // 2 + 1)
    top, left = rng.integers(0, size - side + 1, 2)
    square = (rows >= top) & (rows < top + side) & \
        (cols >= left) & (cols < left + side)
    image[square], mask[square] = rng.uniform(0.5, 1.0), 1
    radius = rng.uniform(size / 8, size / 4)
    cy, cx = rng.uniform(radius, size - radius, 2)
    disc = (rows + 0.5 - cy) ** 2 + (cols + 0.5 - cx) ** 2 <= radius ** 2
    image[disc], mask[disc] = rng.uniform(0.5, 1.0), 2
    image += rng.normal(0, 0.1, image.shape).astype(np.float32)
    return image, mask


def shapes(count, size, seed=0):
    rng = np.random.default_rng(seed)
    pairs = [draw(rng, size) for _ in range(count)]
    images = np.stack([p[0] for p in pairs])[:, None]
    return images.astype(np.float32), np.stack([p[1] for p in pairs])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    images, masks = shapes(args.count, args.size, args.seed)
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "images.npy"), images)
    np.save(os.path.join(args.out, "masks.npy"), masks)
    share = np.bincount(masks.ravel(), minlength=CLASSES) / masks.size
    print(f"{args.out}: {args.count} images of {args.size}x{args.size}; "
          f"pixels per class " + ", ".join(f"{s:.2f}" for s in share))


if __name__ == "__main__":
    main()
