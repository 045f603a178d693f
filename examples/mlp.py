"""A small neural network trained with plain gradient steps, its parameters a list of (W, b).

`rulebridge.grad` differentiates with respect to any nesting of lists, tuples and dicts of
arrays and returns the gradient in the same structure, so a training step is a comprehension.
The network fits y = sin(3x) on [-1, 1]: two tanh hidden layers and a linear output.
"""

import numpy as np

import rulebridge


def init_params(sizes, rng):
    """One (W, b) pair per layer, scaled so that tanh starts in its linear range."""
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(sizes, sizes[1:])]


def predict(params, x):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return h @ W + b


def loss(params, x, y):
    return np.mean((predict(params, x) - y) ** 2)


def central_difference(params, x, y, layer, which, index, h=1e-6):
    """d loss / d params[layer][which][index] by central differences, independent of rulebridge."""
    def shifted(step):
        moved = [[W.copy(), b.copy()] for W, b in params]
        moved[layer][which][index] += step
        return loss(moved, x, y)

    return (shifted(h) - shifted(-h)) / (2 * h)


def main(steps=1500, n_points=64, hidden=16, learning_rate=0.1, seed=0):
    rng = np.random.default_rng(seed)
    x = np.linspace(-1, 1, n_points)[:, None]
    y = np.sin(3 * x)
    params = init_params([1, hidden, hidden, 1], rng)

    grads = rulebridge.grad(loss)(params, x, y)
    # the gradient comes back in the parameters' own structure: a list of (W, b) tuples
    assert isinstance(grads, list) and all(type(g) is tuple and len(g) == 2 for g in grads)
    assert all(gW.shape == W.shape and gb.shape == b.shape
               for (W, b), (gW, gb) in zip(params, grads))
    for layer, which, index in [(0, 0, (0, 3)), (1, 0, (5, 2)), (1, 1, (7,)), (2, 0, (4, 0))]:
        reference = central_difference(params, x, y, layer, which, index)
        assert np.isclose(grads[layer][which][index], reference, rtol=1e-5, atol=1e-9)

    loss_and_grad = rulebridge.value_and_grad(loss)
    first = loss(params, x, y)
    for step in range(steps):
        value, grads = loss_and_grad(params, x, y)
        params = [(W - learning_rate * gW, b - learning_rate * gb)
                  for (W, b), (gW, gb) in zip(params, grads)]
    last = loss(params, x, y)
    assert last < first / 20, (first, last)  # the fit is more than 20 times better
    print(f"mean squared error {first:.4f} -> {last:.5f} after {steps} steps")
    return params


if __name__ == "__main__":
    main()
