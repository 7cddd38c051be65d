// r_boundary.cpp: see r_boundary.h.
#include "r_boundary.h"

namespace gk {

namespace {

const char* kind_name(EngineError::Kind kind) {
  switch (kind) {
    case EngineError::Kind::kNotBuilt: return "not_built";
    case EngineError::Kind::kNoDevice: return "no_device";
    case EngineError::Kind::kOutOfMemory: return "out_of_memory";
    case EngineError::Kind::kDevice: return "device_error";
    case EngineError::Kind::kData: return "data_error";
    case EngineError::Kind::kUnsupported: return "unsupported";
    case EngineError::Kind::kNonFinite: return "nonfinite";
    case EngineError::Kind::kInvalid: break;
  }
  return "invalid";
}

}  // namespace

void signal_engine_error(const EngineError& e) {
  Rcpp::Environment ns = Rcpp::Environment::namespace_env("gpukmeans");
  Rcpp::Function engine_error = ns["engine_error"];
  if (const NonFiniteData* nf = dynamic_cast<const NonFiniteData*>(&e))  // (the place, 1-based, for R's message)
    engine_error(kind_name(e.kind()), e.what(), static_cast<double>(nf->index()) + 1.0);
  engine_error(kind_name(e.kind()), e.what());
  // engine_error() always signals an error; this line is never reached.
  Rcpp::stop(e.what());
}

}  // namespace gk
