// Levenberg-Marquardt (sim/fit.h): known answers on small problems, bounds, and the linear solve.
#include "sim/fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace braid::sim {
namespace {

TEST(Cholesky, SolvesASymmetricPositiveDefiniteSystem) {
  std::vector<double> a = {4, 2, 0.4, 2, 5, 1, 0.4, 1, 3}, b = {1, 2, 3}, x;
  ASSERT_TRUE(solveCholesky(a, b, 3, x));
  for (size_t i = 0; i < 3; ++i) {
    double s = 0;
    for (size_t j = 0; j < 3; ++j) s += a[i * 3 + j] * x[j];
    EXPECT_NEAR(s, b[i], 1e-12);
  }
  std::vector<double> indefinite = {1, 2, 2, 1};
  EXPECT_FALSE(solveCholesky(indefinite, {1, 1}, 2, x));
}

TEST(LevenbergMarquardt, FindsTheRosenbrockMinimum) {
  FitProblem p;
  p.numResiduals = 2;
  p.residuals = [](const std::vector<double>& x, std::vector<double>& r) {
    r[0] = 10 * (x[1] - x[0] * x[0]);
    r[1] = 1 - x[0];
  };
  FitResult f = levenbergMarquardt(p, {-1.2, 1.0});
  EXPECT_TRUE(f.converged);
  EXPECT_NEAR(f.x[0], 1.0, 1e-6);
  EXPECT_NEAR(f.x[1], 1.0, 1e-6);
  EXPECT_LT(f.cost, 1e-12);
  EXPECT_GT(f.initialCost, 1);
}

// y = a exp(-b t) + c sampled with noise: the fit lands near the truth and no worse than it.
TEST(LevenbergMarquardt, RecoversAnExponentialDecayFromNoisySamples) {
  const double a = 3.0, b = 0.7, c = 0.5;
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> t, y;
  for (int i = 0; i < 40; ++i) {
    t.push_back(0.25 * i);
    y.push_back(a * std::exp(-b * t.back()) + c + noise(rng));
  }
  FitProblem p;
  p.numResiduals = t.size();
  p.residuals = [&](const std::vector<double>& x, std::vector<double>& r) {
    for (size_t i = 0; i < t.size(); ++i) r[i] = x[0] * std::exp(-x[1] * t[i]) + x[2] - y[i];
  };
  FitResult f = levenbergMarquardt(p, {1, 0.1, 0});
  EXPECT_NEAR(f.x[0], a, 0.05);
  EXPECT_NEAR(f.x[1], b, 0.02);
  EXPECT_NEAR(f.x[2], c, 0.02);
  std::vector<double> r(t.size());
  p.residuals({a, b, c}, r);
  double truth = 0;
  for (double v : r) truth += 0.5 * v * v;
  EXPECT_LE(f.cost, truth);
}

TEST(LevenbergMarquardt, StaysInsideTheBounds) {
  FitProblem p;
  p.numResiduals = 1;
  p.residuals = [](const std::vector<double>& x, std::vector<double>& r) { r[0] = x[0] - 5; };
  p.lower = {0};
  p.upper = {2};
  FitResult f = levenbergMarquardt(p, {10});  // starts outside: clamped
  EXPECT_NEAR(f.x[0], 2, 1e-12);
}

TEST(LevenbergMarquardt, LeavesAParameterNoResidualDependsOn) {
  FitProblem p;
  p.numResiduals = 1;
  p.residuals = [](const std::vector<double>& x, std::vector<double>& r) { r[0] = x[0] - 3; };
  FitResult f = levenbergMarquardt(p, {0, 42});
  EXPECT_NEAR(f.x[0], 3, 1e-9);
  EXPECT_EQ(f.x[1], 42);
}

}  // namespace
}  // namespace braid::sim
