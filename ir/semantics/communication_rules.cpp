#include "ir/semantics/communication_rules.h"

#include <algorithm>

namespace braid::sem {

CommRoles commRoles(CommunicationType t, bool isRoot) {
  switch (t) {
    case CommunicationType::kAllgather:
    case CommunicationType::kAllreduce:
    case CommunicationType::kReduceScatter:
    case CommunicationType::kAllToAll:
      return {true, true};
    case CommunicationType::kBroadcast:
    case CommunicationType::kScatter:
      return {isRoot, true};
    case CommunicationType::kReduce:
    case CommunicationType::kGather:
      return {true, isRoot};
    case CommunicationType::kSendRecv:
      return {isRoot, !isRoot};
  }
  return {};
}

bool isSymmetric(CommunicationType t) {
  return t == CommunicationType::kAllgather || t == CommunicationType::kAllreduce ||
         t == CommunicationType::kReduceScatter || t == CommunicationType::kAllToAll;
}

namespace {
std::string times(int64_t n, int64_t c) { return std::to_string(n) + " x " + std::to_string(c); }
}  // namespace

std::string communicationSizeProblem(CommunicationType t, int64_t n, bool isRoot, const CommRoles& roles,
                                     int64_t in, int64_t out) {
  std::string over = " over " + std::to_string(n) + " ranks";
  switch (t) {
    case CommunicationType::kAllgather:
      if (out != n * in)
        return "an Allgather" + over + " needs an output of " + times(n, in) + " elements, got " + std::to_string(out);
      break;
    case CommunicationType::kReduceScatter:
      if (in != n * out)
        return "a ReduceScatter" + over + " needs an input of " + times(n, out) + " elements, got " + std::to_string(in);
      break;
    case CommunicationType::kAllreduce:
      if (in != out)
        return "an Allreduce needs input and output of the same size, got " + std::to_string(in) + " and " +
               std::to_string(out);
      break;
    case CommunicationType::kAllToAll:
      if (in != out)
        return "an AllToAll needs input and output of the same size, got " + std::to_string(in) + " and " +
               std::to_string(out);
      if (n > 0 && in % n != 0)
        return "an AllToAll" + over + " needs buffers that divide into " + std::to_string(n) + " equal parts, got " +
               std::to_string(in) + " elements";
      break;
    case CommunicationType::kScatter:
      if (isRoot && in != n * out)
        return "a Scatter" + over + " needs a root input of " + times(n, out) + " elements (one chunk per member), got " +
               std::to_string(in);
      break;
    case CommunicationType::kGather:
      if (isRoot && out != n * in)
        return "a Gather" + over + " needs a root output of " + times(n, in) + " elements (one chunk per member), got " +
               std::to_string(out);
      break;
    case CommunicationType::kBroadcast:
    case CommunicationType::kReduce:
      if (roles.readsInput && roles.writesOutput && in != out)
        return std::string("a ") + communicationTypeName(t) + " moves the same count on every member, but the root's " +
               "input has " + std::to_string(in) + " elements and its output " + std::to_string(out);
      break;
    case CommunicationType::kSendRecv:
      break;
  }
  return "";
}

bool postsCommunication(const Communication& c, int64_t rank) {
  return std::find(c.team.begin(), c.team.end(), rank) != c.team.end();
}

std::string communicatorName(CommBackend backend, std::vector<int64_t> team) {
  std::sort(team.begin(), team.end());
  std::string s = std::string(commBackendName(backend)) + " team (";
  for (size_t i = 0; i < team.size(); ++i) s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

}  // namespace braid::sem
