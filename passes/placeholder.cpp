// Keeps this library non-empty until its first real source lands.
namespace braid::passes_placeholder {}
