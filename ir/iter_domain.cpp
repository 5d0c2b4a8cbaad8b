#include "ir/iter_domain.h"

namespace braid {

std::string IterDomain::str() const {
  std::string s(iterTypeLetter(iter_type_));
  s += parallelTypeName(parallel_);
  s += std::to_string(id_);
  s += '{';
  s += extent_.extentStr();
  s += '}';
  if (rfactor_) s += "rf";
  return s;
}

bool IterDomain::sameAs(const IterDomain& other) const {
  return iter_type_ == other.iter_type_ && parallel_ == other.parallel_ && rfactor_ == other.rfactor_ &&
         extent_ == other.extent_;
}

}  // namespace braid
