// A finding's or witness's site as text and JSON, in the layout `braid verify` prints for the
// bounded checker (verify/checker.cpp formats its sites the same way).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/finding.h"

namespace braid::verify {

// "  write: T3 = Set(T2)   [file:12:5]\n      rank 0, on worker stream 1, StreamIdx=1, ...\n".
std::string siteText(const Site& s);
nlohmann::json siteJson(const Site& s);

// The texts in order with `sep` between them (notes, assumptions).
std::string joinText(const std::vector<std::string>& v, const std::string& sep);

}  // namespace braid::verify
