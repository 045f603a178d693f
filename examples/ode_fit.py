"""The parameters of an ODE fitted to noisy observations, through a hand-written RK4 loop.

The simulation is ordinary NumPy written the way one writes it without gradients: a buffer for
the trajectory, filled row by row, and a right-hand side that writes into its own buffer.
Buffers allocated from a traced array (`np.zeros_like(x)`, `np.empty_like(x)`,
`np.zeros(shape, like=x)`) are followed by the tape, so every write is differentiated exactly.
The model is Lotka-Volterra: prey `u` and predators `v`.
"""

import numpy as np
import scipy.optimize

import rulebridge


def lotka_volterra(state, params):
    alpha, beta, gamma, delta = params[0], params[1], params[2], params[3]
    u, v = state[0], state[1]
    rate = np.empty_like(state)
    rate[0] = alpha * u - beta * u * v
    rate[1] = delta * u * v - gamma * v
    return rate


def simulate(params, initial, dt, n_steps):
    """RK4 from `initial`: one row of the returned array per time step."""
    trajectory = np.zeros((n_steps + 1, len(initial)), like=params)
    trajectory[0] = initial
    state = trajectory[0].copy()
    for n in range(n_steps):
        k1 = lotka_volterra(state, params)
        k2 = lotka_volterra(state + 0.5 * dt * k1, params)
        k3 = lotka_volterra(state + 0.5 * dt * k2, params)
        k4 = lotka_volterra(state + dt * k3, params)
        state += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        trajectory[n + 1] = state
    return trajectory


def misfit(params, initial, dt, n_steps, observed, every):
    predicted = simulate(params, initial, dt, n_steps)[::every]
    return 0.5 * np.sum((predicted - observed) ** 2)


def central_differences(f, p, h=1e-6):
    """The gradient of `f` at `p` by central differences: a reference independent of rulebridge."""
    return np.array([(f(p + e) - f(p - e)) / (2 * h) for e in np.eye(len(p)) * h])


def main(n_steps=200, dt=0.05, every=5, noise=0.02, seed=0):
    rng = np.random.default_rng(seed)
    true = np.array([1.0, 0.5, 1.2, 0.4])  # alpha, beta, gamma, delta
    initial = np.array([2.0, 1.0])
    exact = simulate(true, initial, dt, n_steps)[::every]
    observed = exact + noise * rng.normal(size=exact.shape)
    data = (initial, dt, n_steps, observed, every)

    misfit_and_grad = rulebridge.value_and_grad(misfit)
    start = true * np.array([1.2, 0.8, 0.85, 1.15])
    f = lambda p: misfit(p, *data)  # noqa: E731
    _, g = misfit_and_grad(start, *data)
    assert np.allclose(g, central_differences(f, start), rtol=1e-5, atol=1e-7)

    result = scipy.optimize.minimize(misfit_and_grad, start, args=data, jac=True,
                                     method="L-BFGS-B", bounds=[(0.05, 5.0)] * 4)
    assert result.success, result.message
    assert result.fun < 1e-2 * f(start)  # the misfit fell by two orders of magnitude
    error = np.abs(result.x / true - 1)
    assert np.all(error < 0.05), error  # each parameter within 5% of the one that made the data
    print(f"misfit {f(start):.4f} -> {result.fun:.4f} in {result.nit} iterations")
    print("fitted:", np.round(result.x, 3), " true:", true)
    return result


if __name__ == "__main__":
    main()
