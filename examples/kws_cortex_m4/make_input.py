"""Make yes.bin, the example's input: one second of a synthesised spoken "yes", turned into the
features the MLPerf Tiny KWS model takes (49 frames x 10 MFCCs, as its training pipeline computes
them with tf.signal), quantized to int8 with the model's input scale and zero point.

The voice is a formant synthesiser (a glottal pulse train through three resonators gliding from
/j/ to /e/, then a band-passed noise /s/), not a recording: the Speech Commands recordings are not
in this repository. numpy only:  python make_input.py [--float32] [-o yes.bin]
"""

from __future__ import annotations

import argparse

import numpy as np

RATE = 16000
INPUT_SCALE, INPUT_ZERO_POINT = 0.5847029, 83  # kws_ref_model.tflite's input quantization


def glide(points, n):
    return np.interp(np.arange(n), np.linspace(0, n - 1, len(points)), points)


def voiced(seconds, pitch, formants, bandwidths, envelope):
    """A vowel glide: harmonics of a gliding pitch through gliding two-pole resonators."""
    n = int(seconds * RATE)
    f0 = glide(pitch, n)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    source = sum(np.sin(h * phase) / h ** 1.2 * (h * f0 < 7000) for h in range(1, 40))
    out = np.zeros(n)
    for k, (track, bw) in enumerate(zip(formants, bandwidths)):
        r = np.exp(-np.pi * bw / RATE)
        c = 2 * r * np.cos(2 * np.pi * glide(track, n) / RATE)
        y1 = y2 = 0.0
        res = np.empty(n)
        for i in range(n):
            res[i] = y0 = source[i] + c[i] * y1 - r * r * y2
            y1, y2 = y0, y1
        out += res * (1 - r) / (k + 1)
    return out / np.abs(out).max() * glide(envelope, n)


def hiss(seconds, rng):
    """/s/: noise above 3.5 kHz, faded in and out."""
    n = int(seconds * RATE)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / RATE)
    s = np.fft.irfft(spectrum * np.clip((f - 3500) / 1000, 0, 1), n)
    return s / np.abs(s).max() * 0.35 * glide([0.2, 1, 1, 0], n)


def yes_audio(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    word = np.concatenate([
        voiced(0.32, [135, 128, 110], [[280, 350, 550, 560], [2250, 2150, 1850, 1800], [3000, 2900, 2600, 2550]],
               [60, 90, 150], [0, 0.6, 1, 0.9, 0.6, 0.2]),
        hiss(0.18, rng)])
    audio = 0.003 * rng.standard_normal(RATE)  # a quiet room
    start = int(0.3 * RATE)
    audio[start:start + len(word)] += 0.5 * word
    return audio


def mel_weights(bins=257, mels=40, low=20.0, high=4000.0):
    """tf.signal.linear_to_mel_weight_matrix: HTK mel scale, triangles, no weight on the DC bin."""
    def mel(f):
        return 1127.0 * np.log1p(f / 700.0)
    freqs = mel(np.linspace(0, RATE / 2, bins)[1:])[:, None]
    edges = np.linspace(mel(low), mel(high), mels + 2)
    lo, mid, hi = edges[:-2], edges[1:-1], edges[2:]
    w = np.maximum(0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)))
    return np.vstack([np.zeros((1, mels)), w])


def mfcc(audio: np.ndarray) -> np.ndarray:
    """The MLPerf Tiny KWS front end: 30 ms Hann frames every 20 ms, |FFT 512|, 40 mel bands
    (20 Hz - 4 kHz), log(x + 1e-6), DCT-II scaled as tf.signal.mfccs_from_log_mel_spectrograms,
    first 10 coefficients."""
    frame, step = 480, 320
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame) / frame)
    frames = np.stack([audio[i:i + frame] * window for i in range(0, len(audio) - frame + 1, step)])
    log_mel = np.log(np.abs(np.fft.rfft(frames, 512)) @ mel_weights() + 1e-6)
    n = log_mel.shape[1]
    k = np.arange(n)
    dct = 2 * np.cos(np.pi * np.outer(2 * k + 1, k) / (2 * n))
    return (log_mel @ dct)[:, :10] / np.sqrt(2 * n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--float32", action="store_true", help="float32 features (kws_ref_model_float32.tflite)")
    ap.add_argument("-o", "--output", default="yes.bin")
    args = ap.parse_args()
    features = mfcc(yes_audio())
    if args.float32:
        data = features.astype("<f4")
    else:
        data = np.clip(np.round(features / INPUT_SCALE) + INPUT_ZERO_POINT, -128, 127).astype(np.int8)
    data.tofile(args.output)
    print(f"wrote {args.output}: {features.shape[0]} frames x {features.shape[1]} MFCCs, {data.nbytes} bytes")


if __name__ == "__main__":
    main()
