"""Linear algebra for the endpoint model's fits: a few unknowns, no numpy needed."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["nnls", "solve"]


def solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting (4 unknowns; no numpy needed)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-18:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def nnls(
    a: list[list[float]], b: list[float], lam: list[float], prior: Sequence[float]
) -> list[float]:
    """Ridge towards ``prior`` (weights ``lam``) with no coefficient below zero: a
    coefficient that wants to be negative is set to zero and the rest refitted (a
    small active-set least squares)."""
    k = len(b)
    theta = [0.0] * k
    active = list(range(k))
    while active:
        m = [[a[i][j] + (lam[i] if i == j else 0.0) for j in active] for i in active]
        v = [b[i] + lam[i] * prior[i] for i in active]
        solution = solve(m, v)
        if solution is None:
            return list(prior)
        worst = min(range(len(active)), key=lambda j: solution[j])
        if solution[worst] >= 0:
            for j, i in enumerate(active):
                theta[i] = solution[j]
            return theta
        theta[active[worst]] = 0.0
        del active[worst]
    return theta
