// A readable listing of a program model, for people debugging the encoding (BRAID_DUMP=model).
#include <sstream>

#include "verify/parametric/model.h"

namespace braid::verify::parametric {

namespace {

std::string streamStr(const SymStream& s) { return "(" + s.cls.to_string() + ", " + s.key.to_string() + ")"; }

std::string viewStr(const View& v) {
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < v.lo.size(); ++d)
    os << (d ? ", " : "") << v.lo[d].to_string() << " +" << v.len[d].to_string() << " of " << v.base[d].to_string();
  os << "] dims(";
  for (size_t i = 0; i < v.dims.size(); ++i) os << (i ? " " : "") << v.dims[i];
  os << ")";
  return os.str();
}

std::string bufStr(const BufRef& b) {
  std::string s = "site" + std::to_string(b.site) + "[";
  for (size_t i = 0; i < b.idx.size(); ++i) s += (i ? ", " : "") + b.idx[i].to_string();
  return s + "]";
}

}  // namespace

std::string dumpModel(const ProgramModel& m) {
  std::ostringstream os;
  os << "domain: " << m.domain.to_string() << "\n";
  for (const auto& lv : m.loops)
    os << "loop " << lv->var.to_string() << " in [" << lv->begin.to_string() << ", " << lv->end.to_string() << ")\n";
  for (const auto& s : m.sites)
    os << "site" << s.id << ": " << (s.tensor ? s.tensor->nameStr() : "?") << (s.isInput ? " (input)" : "") << "\n";
  for (const auto& t : m.templates) {
    if (!t.recorded) continue;
    os << "t" << t.id << " " << templateKindName(t.kind) << " " << m.describe(t) << "\n";
    os << "    guard " << t.guard.to_string() << "\n    stream " << streamStr(t.stream);
    if (t.kind == TemplateKind::kComm) os << " post " << streamStr(t.post);
    if (t.kind == TemplateKind::kSync) os << " target " << streamStr(t.target);
    os << "\n    path";
    for (const auto& p : t.path) os << " " << (p.loop ? p.loop->var.to_string() : std::to_string(p.pos));
    os << "\n";
    for (const auto& a : t.accesses)
      os << "    " << (a.write ? "write " : "read ") << bufStr(a.buf) << " " << viewStr(a.view) << " if "
         << a.cond.to_string() << "\n";
    for (const auto& w : t.waits) {
      os << "    waits t" << w.tmpl << "[";
      for (size_t i = 0; i < w.idx.size(); ++i) os << (i ? ", " : "") << w.idx[i].to_string();
      os << "] if " << w.cond.to_string() << "\n";
    }
    if (t.kind == TemplateKind::kFree || t.kind == TemplateKind::kAlloc) os << "    buffer " << bufStr(t.buf) << "\n";
  }
  for (const auto& i : m.issues) os << "issue " << findingKindName(i.kind) << ": " << i.message << " if " << i.guard.to_string() << "\n";
  for (const auto& o : m.outputs)
    os << "output " << o.tensor->nameStr() << " " << bufStr(o.buf) << " " << viewStr(o.view) << " if "
       << o.cond.to_string() << "\n";
  for (const auto& u : m.unsupported) os << "unsupported: " << u << "\n";
  return os.str();
}

}  // namespace braid::verify::parametric
