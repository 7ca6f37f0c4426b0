#!/usr/bin/env python3
"""A deterministic synthetic language for training the GPT model without
downloading anything.

  python3 examples/corpus.py [--vocab V] [--tokens N] [--seed S] [-o FILE]

The language is a Markov chain over the vocabulary: every token has four
successors, drawn from a Zipf distribution over the vocabulary (so a few
words are common and most are rare), with probabilities 0.55, 0.25, 0.12
and 0.08. A model that learns nothing pays ln(V) nats per token; one that
learns the word frequencies about the unigram entropy; one that learns the
successors about 1.1 nats (the entropy of the four probabilities). The
stream is the chain walked from token 0; `batches` cuts it into training
batches of `seq + 1` tokens (inputs and their next tokens).
"""
import argparse
import math
import sys

import numpy as np

SUCCESSOR_PROBS = (0.55, 0.25, 0.12, 0.08)


def successors(vocab, seed):
    """Each token's successors, [vocab, 4], and their probabilities."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, vocab + 1, dtype=np.float64)
    zipf = 1.0 / ranks
    zipf /= zipf.sum()
    # Word identities are a permutation of the ranks, so that frequent
    # tokens are spread over the vocabulary (and over its tp shards).
    order = rng.permutation(vocab)
    table = order[rng.choice(vocab, size=(vocab, len(SUCCESSOR_PROBS)), p=zipf)]
    return table, np.array(SUCCESSOR_PROBS)


def stream(vocab, tokens, seed=1234):
    """`tokens` tokens of the language (int64)."""
    if vocab < 1 or tokens < 0:
        raise ValueError(f"need a positive vocabulary and a token count, not {vocab}, {tokens}")
    table, probs = successors(vocab, seed)
    rng = np.random.default_rng(seed + 1)
    picks = rng.choice(len(probs), size=tokens, p=probs)
    out = np.empty(tokens, dtype=np.int64)
    t = 0
    for i in range(tokens):
        out[i] = t
        t = table[t, picks[i]]
    return out


def batches(vocab, steps, batch, seq, seed=1234):
    """[steps, batch, seq + 1] tokens: step k's rows are consecutive windows
    of the stream; a row's first seq tokens are the inputs, its last seq the
    targets."""
    n = steps * batch * (seq + 1)
    return stream(vocab, n, seed).reshape(steps, batch, seq + 1)


def entropy_floor():
    """The language's entropy per token in nats, given the previous token."""
    return -sum(p * math.log(p) for p in SUCCESSOR_PROBS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vocab", type=int, default=1003)
    p.add_argument("--tokens", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("-o", "--output", default="-")
    args = p.parse_args(argv)
    try:
        text = " ".join(map(str, stream(args.vocab, args.tokens, args.seed))) + "\n"
    except ValueError as e:
        print(f"corpus.py: error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
