// The compiled part of the fmt library, built once here. Every other file includes <fmt/format.h>
// without FMT_HEADER_ONLY and so does not compile fmt's formatting core itself (about 3 s per file
// at -O2, 5 s under ASan); the build links no libfmt.so either, so libncclshim.so stays free of a
// run-time dependency a GPU host may lack. format-inl.h holds fmt's out-of-line functions; the
// templates format.h declares `extern` are instantiated below for char, the only character type used.
#include <fmt/format-inl.h>

namespace fmt {
inline namespace v9 {
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
}  // namespace detail
}  // namespace v9
}  // namespace fmt
