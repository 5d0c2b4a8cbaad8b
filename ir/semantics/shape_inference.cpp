#include "ir/semantics/shape_inference.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "ir/semantics/buffer_rules.h"

namespace braid::sem {

namespace {
double product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), 1.0, [](double a, int64_t b) { return a * static_cast<double>(b); });
}
}  // namespace

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = x == 1 ? y : x;
  }
  return out;
}

OpResult inferOpResult(const Expr& e, const std::vector<std::vector<int64_t>>& ins,
                       const std::vector<int64_t>& outDomainShape) {
  OpResult res;
  switch (e.type()) {
    case OpType::kSet:
    case OpType::kUnary:
    case OpType::kBinary: {
      std::vector<int64_t> s = ins.empty() ? outDomainShape : ins[0];
      for (size_t i = 1; i < ins.size(); ++i) s = broadcastShapes(s, ins[i]);
      res.shape = s;
      res.flops = product(s);
      return res;
    }
    case OpType::kPermute: {
      const auto& in = ins.at(0);
      if (e.permutation.size() == in.size()) {
        for (int64_t p : e.permutation) res.shape.push_back(in[static_cast<size_t>(p)]);
      } else {
        res.shape = outDomainShape;
      }
      return res;
    }
    case OpType::kReduction: {
      const auto& in = ins.at(0);
      const auto& dom = e.output(0)->loop();
      res.flops = product(in);
      if (dom.size() == in.size()) {
        for (size_t i = 0; i < dom.size(); ++i)
          if (!dom[i]->isReduction()) res.shape.push_back(in[i]);
      } else {
        res.shape = outDomainShape;
      }
      return res;
    }
    case OpType::kMatmul:
    case OpType::kLinear: {
      std::vector<int64_t> a = ins.at(0);
      std::vector<int64_t> b = ins.size() > 1 ? ins[1] : std::vector<int64_t>{};
      if (e.type() == OpType::kLinear && b.size() >= 2) std::swap(b[b.size() - 1], b[b.size() - 2]);
      if (a.empty() || b.empty()) {
        res.shape = outDomainShape;
        return res;
      }
      int64_t k = a.back();
      std::vector<int64_t> out;
      if (b.size() == 1) {
        out.assign(a.begin(), a.end() - 1);
      } else if (a.size() == 1) {
        out.assign(b.begin(), b.end() - 2);
        out.push_back(b.back());
      } else {
        std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
        out = broadcastShapes(ba, bb);
        out.push_back(a[a.size() - 2]);
        out.push_back(b.back());
      }
      res.shape = out;
      res.flops = 2.0 * product(out) * static_cast<double>(k);
      // The GEMM cuBLAS runs (torch.matmul's rules): a vector A is one row; a matrix (or vector)
      // B, or one whose batch dimensions are all 1 (a sharded dimension's local extent), folds A's
      // batch dimensions into the rows; else the leading dimensions are a batch.
      auto prod = [&](size_t from, size_t to) { return static_cast<int64_t>(product({out.begin() + from, out.begin() + to})); };
      const size_t r = out.size();
      res.gemm.k = k;
      res.gemm.n = b.size() == 1 ? 1 : out.back();
      const size_t rows = b.size() == 1 ? r : r - 1;  // out's dimensions before n
      if (a.size() == 1) {
        res.gemm.m = 1;
        res.gemm.batch = prod(0, rows);
      } else if (b.size() <= 2 || product({b.begin(), b.end() - 2}) == 1) {
        res.gemm.m = prod(0, rows);
        res.gemm.batch = 1;
      } else {
        res.gemm.m = out[r - 2];
        res.gemm.batch = prod(0, r - 2);
      }
      return res;
    }
    case OpType::kBroadcast:
    case OpType::kSqueeze:
    case OpType::kReshape:
      res.shape = outDomainShape;
      return res;
  }
  res.shape = outDomainShape;
  return res;
}

double fusionFlops(const Fusion& f, const Bindings& env) {
  double flops = 0;
  for (const Expr* e : f.exprs()) {
    try {
      double n = product(bufferShape(*e->output(0), env));
      if ((e->type() == OpType::kMatmul || e->type() == OpType::kLinear) && !e->inputs().empty()) {
        std::vector<int64_t> a = bufferShape(*e->input(0), env);
        flops += 2.0 * n * static_cast<double>(a.empty() ? 1 : a.back());
      } else if (e->type() == OpType::kReduction && !e->inputs().empty()) {
        flops += product(bufferShape(*e->input(0), env));
      } else {
        flops += n;
      }
    } catch (const Error&) {
      // A kernel whose sizes do not evaluate here contributes no flops estimate.
    }
  }
  return flops;
}

}  // namespace braid::sem
