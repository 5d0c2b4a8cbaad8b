// Nonlinear least squares: Levenberg-Marquardt with a finite-difference Jacobian and box bounds,
// small enough to read (a machine model has tens of constants, calibration hundreds of
// measurements, so dense normal equations solved by Cholesky are plenty). Calibration
// (calibrate.h) fits machine constants with it.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace braid::sim {

struct FitProblem {
  size_t numResiduals = 0;
  // Writes the residuals at `x` into `r` (sized numResiduals).
  std::function<void(const std::vector<double>& x, std::vector<double>& r)> residuals;
  std::vector<double> lower, upper;  // bounds of each parameter (empty: unbounded)
};

struct FitOptions {
  int maxIterations = 200;
  double relativeTolerance = 1e-12;  // stop when an accepted step lowers the cost by less than this
  double differenceStep = 1e-6;      // central differences of size step x max(1, |x|)
};

struct FitResult {
  std::vector<double> x;
  double initialCost = 0;  // half the sum of squared residuals at the start
  double cost = 0;         // ... at `x`
  int iterations = 0;
  bool converged = false;  // stopped on the tolerance rather than the iteration limit
};

// Minimizes half the sum of squared residuals from `x0` (clamped into the bounds).
FitResult levenbergMarquardt(const FitProblem& p, std::vector<double> x0, const FitOptions& o = {});

// Solves the symmetric positive definite system a x = b (n x n, row-major) by Cholesky; false
// when `a` is not positive definite.
bool solveCholesky(std::vector<double> a, std::vector<double> b, size_t n, std::vector<double>& x);

}  // namespace braid::sim
