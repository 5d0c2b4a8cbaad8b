// Levenberg-Marquardt (fit.h): Marquardt's scaling of the damping by the normal matrix's
// diagonal, so parameters of different magnitudes are damped alike.
#include "sim/fit.h"

#include <algorithm>
#include <cmath>

namespace braid::sim {

bool solveCholesky(std::vector<double> a, std::vector<double> b, size_t n, std::vector<double>& x) {
  for (size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0) || !std::isfinite(d)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (size_t k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  x.assign(n, 0);
  for (size_t i = n; i-- > 0;) {  // L^T x = y
    double s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= a[k * n + i] * x[k];
    x[i] = s / a[i * n + i];
  }
  return true;
}

static double halfSquares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return 0.5 * s;
}

FitResult levenbergMarquardt(const FitProblem& p, std::vector<double> x, const FitOptions& o) {
  const size_t n = x.size(), m = p.numResiduals;
  auto clamp = [&](std::vector<double>& v) {
    for (size_t i = 0; i < n; ++i) {
      if (!p.lower.empty()) v[i] = std::max(v[i], p.lower[i]);
      if (!p.upper.empty()) v[i] = std::min(v[i], p.upper[i]);
    }
  };
  clamp(x);
  std::vector<double> r(m), rp(m), rm(m), jac(m * n);
  p.residuals(x, r);
  FitResult out;
  out.initialCost = out.cost = halfSquares(r);
  double lambda = 1e-3;
  for (int it = 0; it < o.maxIterations && n > 0; ++it) {
    out.iterations = it + 1;
    // Central differences; at a bound the step goes inward only.
    for (size_t j = 0; j < n; ++j) {
      double h = o.differenceStep * std::max(1.0, std::abs(x[j]));
      std::vector<double> xp = x, xm = x;
      xp[j] += h;
      xm[j] -= h;
      clamp(xp);
      clamp(xm);
      double span = xp[j] - xm[j];
      p.residuals(xp, rp);
      p.residuals(xm, rm);
      for (size_t i = 0; i < m; ++i) jac[i * n + j] = span > 0 ? (rp[i] - rm[i]) / span : 0;
    }
    std::vector<double> jtj(n * n, 0), g(n, 0);
    for (size_t i = 0; i < m; ++i)
      for (size_t a = 0; a < n; ++a) {
        double ja = jac[i * n + a];
        if (ja == 0) continue;
        g[a] += ja * r[i];
        for (size_t b = 0; b < n; ++b) jtj[a * n + b] += ja * jac[i * n + b];
      }
    double maxDiag = 0;
    for (size_t a = 0; a < n; ++a) maxDiag = std::max(maxDiag, jtj[a * n + a]);
    bool accepted = false;
    for (int tries = 0; tries < 30 && !accepted; ++tries) {
      std::vector<double> lhs = jtj, step;
      // A parameter no residual depends on still gets a positive diagonal (it stays put).
      for (size_t a = 0; a < n; ++a)
        lhs[a * n + a] += lambda * std::max(jtj[a * n + a], 1e-12 * std::max(maxDiag, 1.0));
      std::vector<double> rhs(n);
      for (size_t a = 0; a < n; ++a) rhs[a] = -g[a];
      if (!solveCholesky(lhs, rhs, n, step)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> xn = x;
      for (size_t a = 0; a < n; ++a) xn[a] += step[a];
      clamp(xn);
      p.residuals(xn, rp);
      double c = halfSquares(rp);
      if (std::isfinite(c) && c <= out.cost) {
        double gain = out.cost - c;
        x = std::move(xn);
        r = rp;
        out.cost = c;
        lambda = std::max(lambda / 3, 1e-12);
        accepted = true;
        if (gain <= o.relativeTolerance * std::max(c, 1e-300)) {
          out.converged = true;
          out.x = x;
          return out;
        }
      } else {
        lambda *= 4;
      }
    }
    if (!accepted) {  // no step lowers the cost: a (local) minimum
      out.converged = true;
      break;
    }
  }
  out.x = x;
  return out;
}

}  // namespace braid::sim
