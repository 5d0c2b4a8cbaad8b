#include "ir/device_mesh.h"

#include <algorithm>

#include "ir/error.h"

namespace braid {

DeviceMesh::DeviceMesh(std::vector<int64_t> devices)
    : devices_(std::move(devices)), shape_{static_cast<int64_t>(devices_.size())} {}

DeviceMesh::DeviceMesh(std::vector<int64_t> devices, std::vector<int64_t> shape)
    : devices_(std::move(devices)), shape_(std::move(shape)) {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  if (n != static_cast<int64_t>(devices_.size()))
    throw Error("device mesh shape does not match its " + std::to_string(devices_.size()) + " devices");
}

DeviceMesh DeviceMesh::range(int64_t n) {
  if (n < 0) throw Error("device mesh range needs a non-negative device count, got " + std::to_string(n));
  std::vector<int64_t> d(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) d[static_cast<size_t>(i)] = i;
  return DeviceMesh(std::move(d));
}

bool DeviceMesh::has(int64_t device) const { return indexOf(device).has_value(); }

std::optional<int64_t> DeviceMesh::indexOf(int64_t device) const {
  auto it = std::find(devices_.begin(), devices_.end(), device);
  if (it == devices_.end()) return std::nullopt;
  return it - devices_.begin();
}

std::vector<int64_t> DeviceMesh::slice(int64_t device, int axis) const {
  if (shape_.size() <= 1) return devices_;
  auto pos = indexOf(device);
  if (!pos) return {};
  int dim = static_cast<int>(shape_.size()) - 1 - axis;
  if (dim < 0) return {};
  int64_t stride = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape_.size(); ++d) stride *= shape_[d];
  int64_t coord = (*pos / stride) % shape_[static_cast<size_t>(dim)];
  int64_t base = *pos - coord * stride;
  std::vector<int64_t> out;
  for (int64_t c = 0; c < shape_[static_cast<size_t>(dim)]; ++c)
    out.push_back(devices_[static_cast<size_t>(base + c * stride)]);
  return out;
}

std::string DeviceMesh::str() const {
  std::string s = "DeviceMesh{";
  if (shape_.size() <= 1) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (i) s += ' ';
      s += std::to_string(devices_[i]);
    }
  } else {
    int64_t row = shape_.back();
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (i % static_cast<size_t>(row) == 0) s += (i ? "} {" : "{");
      else s += " ";
      s += std::to_string(devices_[i]);
    }
    s += "}";
  }
  return s + "}";
}

}  // namespace braid
