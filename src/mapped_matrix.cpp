// mapped_matrix.cpp: a double matrix whose values are a file's bytes, mapped
// into memory rather than read (bigmemory's file-backed and shared big.matrix
// store exactly an n x d column-major block of doubles, R/matrix_sources.R),
// or live in a scratch file (a large source read block by block).
// It is an ALTREP double vector: R code and the engines see an ordinary
// double matrix (REAL() is the mapping), and no dense copy of the data is
// ever made.  A big.matrix's mapping is private (copy on write): a write by
// R never reaches its file; a scratch file's is shared (its pages go to the
// unlinked file, not to anonymous memory; src/dense_fill.cpp fills it).
// The mapping is released when the vector is collected.
#include <Rcpp.h>

#include <R_ext/Altrep.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define GK_HAVE_MMAP 1
#endif
#ifdef __linux__
#include <sys/vfs.h>
#endif

namespace {

struct Mapping {
  void* base = nullptr;   // what mmap returned
  std::size_t bytes = 0;  // its length
  double* values = nullptr;
  R_xlen_t length = 0;
};

R_altrep_class_t mapped_class;

Mapping* mapping_of(SEXP x) { return static_cast<Mapping*>(R_ExternalPtrAddr(R_altrep_data1(x))); }

void release_mapping(SEXP ptr) {
  Mapping* m = static_cast<Mapping*>(R_ExternalPtrAddr(ptr));
  if (!m) return;
#ifdef GK_HAVE_MMAP
  if (m->base) munmap(m->base, m->bytes);
#endif
  delete m;
  R_ClearExternalPtr(ptr);
}

R_xlen_t mapped_length(SEXP x) { return mapping_of(x)->length; }
void* mapped_dataptr(SEXP x, Rboolean) { return mapping_of(x)->values; }
const void* mapped_dataptr_or_null(SEXP x) { return mapping_of(x)->values; }
double mapped_elt(SEXP x, R_xlen_t i) { return mapping_of(x)->values[i]; }
R_xlen_t mapped_get_region(SEXP x, R_xlen_t i, R_xlen_t n, double* buf) {
  const Mapping* m = mapping_of(x);
  const R_xlen_t len = i >= m->length ? 0 : (n < m->length - i ? n : m->length - i);
  if (len > 0) std::memcpy(buf, m->values + i, static_cast<std::size_t>(len) * sizeof(double));
  return len;
}
Rboolean mapped_inspect(SEXP x, int, int, int, void (*)(SEXP, int, int, int)) {
  Rprintf(" gpukmeans mapped file (%.0f doubles)\n", static_cast<double>(mapped_length(x)));
  return TRUE;
}

}  // namespace

// [[Rcpp::init]]
void gk_init_mapped_class(DllInfo* dll) {
  mapped_class = R_make_altreal_class("gk_mapped_real", "gpukmeans", dll);
  R_set_altrep_Length_method(mapped_class, mapped_length);
  R_set_altrep_Inspect_method(mapped_class, mapped_inspect);
  R_set_altvec_Dataptr_method(mapped_class, mapped_dataptr);
  R_set_altvec_Dataptr_or_null_method(mapped_class, mapped_dataptr_or_null);
  R_set_altreal_Elt_method(mapped_class, mapped_elt);
  R_set_altreal_Get_region_method(mapped_class, mapped_get_region);
}

namespace {

#ifdef GK_HAVE_MMAP
// The mapping [base, base + bytes) as an n x d double matrix whose values
// start `offset` bytes in; the vector owns the mapping (unmapped when
// collected).
SEXP mapped_matrix(void* base, std::size_t bytes, std::size_t offset, double n, double d) {
  Mapping* m = new Mapping;
  m->base = base;
  m->bytes = bytes;
  m->values = reinterpret_cast<double*>(static_cast<char*>(base) + offset);
  m->length = static_cast<R_xlen_t>(n * d);
  SEXP ptr = PROTECT(R_MakeExternalPtr(m, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(ptr, release_mapping, TRUE);
  SEXP out = PROTECT(R_new_altrep(mapped_class, ptr, R_NilValue));
  SEXP dim = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(dim)[0] = static_cast<int>(n);
  INTEGER(dim)[1] = static_cast<int>(d);
  Rf_setAttrib(out, R_DimSymbol, dim);
  UNPROTECT(3);
  return out;
}
#endif

inline bool valid_dims(double n, double d) { return n >= 1 && d >= 1 && n <= 2147483647.0 && d <= 2147483647.0; }

}  // namespace

// The n x d doubles of `path` from byte `offset` on, as a double matrix
// that maps the file; NULL where it cannot be mapped (no such file, shorter
// than that, no mmap on this platform): the caller then reads the values.
// [[Rcpp::export]]
SEXP gk_map_doubles(std::string path, double n, double d, double offset) {
#ifdef GK_HAVE_MMAP
  if (!valid_dims(n, d) || !(offset >= 0)) return R_NilValue;
  const double want = offset + n * d * sizeof(double);
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return R_NilValue;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<double>(st.st_size) < want || want > 9.0e18) {
    close(fd);
    return R_NilValue;
  }
  const std::size_t bytes = static_cast<std::size_t>(want);
  // private and writable: copy on write, so a write by R stays in memory
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) return R_NilValue;
  return mapped_matrix(base, bytes, static_cast<std::size_t>(offset), n, d);
#else
  (void)path;
  (void)n;
  (void)d;
  (void)offset;
  return R_NilValue;
#endif
}

// A new n x d double matrix (zeros) whose values live in a scratch file in
// `dir` rather than in anonymous memory: the kernel may write its pages out
// and drop them, so a large matrix read from a source (R/matrix_sources.R)
// holds little resident memory.  The file's blocks are reserved first
// (posix_fallocate), so that a full disk is this error rather than a
// SIGBUS at a later write; the file is unlinked at once, so nothing is left
// behind, whatever happens to the process.  dimnames: set here, on the
// fresh vector (`dimnames<-` in R may copy it).  NULL where there is no mmap.
// [[Rcpp::export]]
SEXP gk_scratch_doubles(std::string dir, double n, double d, SEXP dimnames) {
#ifdef GK_HAVE_MMAP
  if (!valid_dims(n, d) || n * d * sizeof(double) > 9.0e18) Rcpp::stop("invalid dimensions of a scratch matrix");
  const std::size_t bytes = static_cast<std::size_t>(n * d * sizeof(double));
  std::string path = dir + "/gpukmeans-x-XXXXXX";
  const int fd = mkstemp(&path[0]);
  if (fd < 0)
    Rcpp::stop("cannot create a scratch file in '" + dir + "': " + std::strerror(errno));
  unlink(path.c_str());  // the open descriptor, then the mapping, keep it
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) {
    close(fd);
    Rcpp::stop("cannot reserve " + std::to_string(bytes) + " bytes in '" + dir + "': " + std::strerror(err));
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_err = errno;
  close(fd);
  if (base == MAP_FAILED) Rcpp::stop("cannot map a scratch file in '" + dir + "': " + std::strerror(map_err));
  SEXP out = PROTECT(mapped_matrix(base, bytes, 0, n, d));
  if (!Rf_isNull(dimnames)) Rf_setAttrib(out, R_DimNamesSymbol, dimnames);
  UNPROTECT(1);
  return out;
#else
  (void)dir;
  (void)n;
  (void)d;
  (void)dimnames;
  return R_NilValue;
#endif
}

// Whether the directory `path` lives in memory (Linux tmpfs or ramfs): a
// scratch file there is memory, not disk, and saves nothing
// (R/matrix_sources.R then prefers /var/tmp).  false where unknown.
// [[Rcpp::export(rng = false)]]
bool gk_in_memory_fs(std::string path) {
#ifdef __linux__
  struct statfs st;
  if (statfs(path.c_str(), &st) != 0) return false;
  const unsigned long type = static_cast<unsigned long>(st.f_type);
  return type == 0x01021994UL || type == 0x858458f6UL;  // TMPFS_MAGIC, RAMFS_MAGIC
#else
  (void)path;
  return false;
#endif
}

// Whether x is such a mapped matrix (tests: no dense copy was made).
// [[Rcpp::export]]
bool gk_is_mapped(SEXP x) { return ALTREP(x) && R_altrep_inherits(x, mapped_class); }
