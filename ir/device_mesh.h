// DeviceMesh: the devices a tensor lives on, as a 1D or 2D array of device ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid {

class DeviceMesh {
 public:
  DeviceMesh() = default;
  explicit DeviceMesh(std::vector<int64_t> devices);  // 1D
  DeviceMesh(std::vector<int64_t> devices, std::vector<int64_t> shape);  // row-major nD
  static DeviceMesh range(int64_t n);  // {0 1 ... n-1}

  const std::vector<int64_t>& devices() const { return devices_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const { return static_cast<int64_t>(devices_.size()); }
  bool empty() const { return devices_.empty(); }
  bool has(int64_t device) const;
  // Position of `device` in the flat list, or nullopt.
  std::optional<int64_t> indexOf(int64_t device) const;
  // The devices that share all coordinates with `device` except along `axis` (0 = DIDx: the
  // last axis of the shape, 1 = DIDy: the one before), in order. A 1D mesh returns itself.
  std::vector<int64_t> slice(int64_t device, int axis) const;
  // `DeviceMesh{0 1 2 3}`; a 2D mesh prints rows in braces: `DeviceMesh{{0 1} {2 3}}`.
  std::string str() const;
  bool operator==(const DeviceMesh&) const = default;

 private:
  std::vector<int64_t> devices_;
  std::vector<int64_t> shape_;
};

}  // namespace braid
