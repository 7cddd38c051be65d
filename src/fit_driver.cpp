// fit_driver.cpp: restarts and the best start, and Lloyd over several
// engines (see fit_driver.h).
#include "fit_driver.h"
#include "stage_log.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <system_error>
#include <thread>

#include "wall_clock.h"

namespace gk {

namespace {

// R's sum() of withinss (long double accumulation): how stats ranks starts.
double r_sum(const std::vector<double>& v) {
  long double s = 0.0L;
  for (double x : v) s += x;
  return static_cast<double>(s);
}

bool has_empty(const std::vector<int>& size) {
  return std::find(size.begin(), size.end(), 0) != size.end();
}

bool has_nan(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double a) { return std::isnan(a); });
}

// Rows idx of x (n x d) as a k x d column-major matrix (from x's reader
// where x is not in host memory).
std::vector<double> rows_of(const HostData& data, const std::vector<std::int64_t>& idx) {
  const std::size_t k = idx.size();
  std::vector<double> c(k * data.d);
  if (!data.x && data.reader) {
    data.reader->rows(idx.data(), static_cast<std::int64_t>(k), c.data());
    return c;
  }
  for (std::size_t j = 0; j < k; ++j)
    for (int a = 0; a < data.d; ++a) c[j + k * a] = data.x[idx[j] + data.n * a];
  return c;
}

// True when two rows of the k x d matrix c are equal (0 == -0, as R's
// duplicated() sees them).
bool has_duplicate_rows(const std::vector<double>& c, int k, int d) {
  std::vector<int> ord(k);
  for (int j = 0; j < k; ++j) ord[j] = j;
  auto less = [&](int a, int b) {
    for (int j = 0; j < d; ++j) {
      const double u = c[a + static_cast<std::size_t>(k) * j], v = c[b + static_cast<std::size_t>(k) * j];
      if (u < v) return true;
      if (v < u) return false;
    }
    return false;
  };
  std::sort(ord.begin(), ord.end(), less);
  for (int j = 1; j < k; ++j)
    if (!less(ord[j - 1], ord[j]) && !less(ord[j], ord[j - 1])) return true;
  return false;
}

}  // namespace

// Squared distances must not overflow the working precision: (2 max|x|)^2 d
// below its largest number (single precision: of the stored x - shift); in
// single precision they must not underflow either (data within 1e-18 of
// their column means would all be at distance 0).
void check_range(const std::vector<double>& maxabs, Precision precision) {
  double top = 0.0;
  for (double v : maxabs)
    if (!(v <= top)) top = v;  // NaN and Inf win
  const int d = static_cast<int>(maxabs.size());
  const bool single = precision == Precision::kSingle;
  const double limit = std::sqrt((single ? static_cast<double>(FLT_MAX) : DBL_MAX) / (4.0 * d));
  char msg[400];
  if (single && top > 0.0 && top < 1e-18) {
    std::snprintf(msg, sizeof msg,
                  "'x' varies by at most %.3g around its column means, too little for precision = \"single\" "
                  "(squared distances would underflow): rescale x or use precision = \"double\"", top);
    throw EngineError(EngineError::Kind::kData, msg);
  }
  if (top <= limit) return;
  if (single && !std::isfinite(top))
    std::snprintf(msg, sizeof msg,
                  "'x' has values beyond the range of precision = \"single\" (%.3g) from its column means: "
                  "use precision = \"double\"", static_cast<double>(FLT_MAX));
  else if (single)
    std::snprintf(msg, sizeof msg,
                  "'x' has values as far as %.3g from its column means, too large for precision = \"single\" "
                  "(squared distances would overflow above %.3g): use precision = \"double\"",
                  top, limit);
  else
    std::snprintf(msg, sizeof msg,
                  "'x' has values as large as %.3g: squared distances would overflow double precision "
                  "(values must stay below %.3g for %d columns); rescale x",
                  top, limit, d);
  throw EngineError(EngineError::Kind::kData, msg);
}

namespace {

void check_range(Engine& e) { check_range(e.column_maxabs(), e.precision()); }

}  // namespace

FitOutcome fit_starts(Engine& engine, const HostData& data, StartSource& source, int max_iter,
                      IterationObserver* observer, int* labels_out) {
  FitOutcome out;
  if (engine.weights() && !engine.supports_weights())
    throw EngineError(EngineError::Kind::kUnsupported,
                      std::string("the ") + engine.backend() + " engine does not support observation weights yet");
  check_range(engine);
  stage_mark("check_range");
  // totss on the host while the device fits, where the engine allows it
  // (the future is waited for on every way out, before the engine goes).
  // The stage log notes the task's own seconds ("totss_task"); the internal
  // GPUKMEANS_TOTSS_SERIAL=1 computes it first, alone (tools/gpu/totss-probe.R).
  double totss_seconds = -1.0;  // (declared before the future, which may wait for the task on the way out)
  std::future<double> totss;
  const char* serial = std::getenv("GPUKMEANS_TOTSS_SERIAL");
  if (engine.totss_concurrent() && !(serial && serial[0] == '1')) {
    try {
      totss = std::async(std::launch::async, [&engine, &totss_seconds] {
        const double t0 = wall_seconds();
        const double v = engine.totss();
        totss_seconds = wall_seconds() - t0;
        return v;
      });
    } catch (const std::system_error&) {  // no thread: compute it here
    }
  }
  if (!totss.valid()) out.totss = engine.totss();
  stage_mark("totss");
  const int nstart = source.count();
  out.starts.resize(nstart);
  double best_wss = 0.0;
  for (int s = 0; s < nstart; ++s) {
    if (observer) observer->set_start(s + 1, nstart);
    StartSpec spec = source.next(s);
    StartSummary& sum = out.starts[s];
    if (spec.kind != StartSpec::Kind::kCenters) {
      const double t0 = wall_seconds();
      sum.init_rows = initial_rows(engine, spec, observer);
      spec.centers = rows_of(data, sum.init_rows);
      out.seconds_init += wall_seconds() - t0;
      if (has_duplicate_rows(spec.centers, spec.k, data.d))
        throw EngineError(EngineError::Kind::kData, engine.weights()
                                                         ? "more cluster centers than distinct data points with positive weight."
                                                         : "more cluster centers than distinct data points.");
    }
    stage_mark("start");
    // (the destination, unless it holds the best start's labels so far)
    const bool free_out = labels_out && (s == 0 || out.best.cluster.data() != labels_out);
    LloydFit fit = engine.lloyd(spec.centers.data(), spec.k, max_iter, observer,
                                free_out ? Labels::view(labels_out, static_cast<std::size_t>(data.n)) : Labels());
    stage_mark("lloyd");
    out.seconds_compute += fit.seconds_compute;
    out.seconds_download += fit.seconds_download;
    sum.tot_withinss = r_sum(fit.withinss);
    sum.iter = fit.iter;
    // (weighted: a cluster whose rows all weigh 0 is empty too, its center NaN)
    sum.empty = has_empty(fit.size) || (engine.weights() && has_nan(fit.centers));
    if (s == 0 || sum.tot_withinss < best_wss) {
      best_wss = sum.tot_withinss;
      out.best_start = s;
      out.best = std::move(fit);
    }
    stage_mark("keep");
  }
  if (totss.valid()) {
    out.totss = totss.get();
    stage_note("totss_task", totss_seconds);
  }
  return out;
}

std::vector<int> step_scales(const std::vector<double>& maxabs) {
  std::vector<int> scale(maxabs.size());
  for (std::size_t j = 0; j < maxabs.size(); ++j) scale[j] = limb_scale(maxabs[j]);
  return scale;
}

std::vector<double> centers_from_sums(const std::vector<Fixed128>& sum, const std::vector<std::int64_t>& count,
                                      const std::vector<int>& scale, int k) {
  const int d = static_cast<int>(scale.size());
  std::vector<double> cen(static_cast<std::size_t>(k) * d);
  for (int j = 0; j < d; ++j)
    for (int cl = 0; cl < k; ++cl) {
      const std::size_t e = cl + static_cast<std::size_t>(k) * j;
      cen[e] = from_fixed(sum[e].lo, sum[e].hi, scale[j]) / static_cast<double>(count[cl]);
    }
  return cen;
}

std::vector<double> withinss_from_sums(const std::vector<Fixed128>& wsum, const std::vector<std::uint32_t>& maxterm) {
  std::vector<double> w(wsum.size());
  for (std::size_t c = 0; c < wsum.size(); ++c) w[c] = from_fixed(wsum[c].lo, wsum[c].hi, wss_scale(maxterm[c]));
  return w;
}

namespace {

// Sums of all parts' steps, and the new centers they give (stored coordinates).
struct Combined {
  std::vector<Fixed128> sum;
  std::vector<std::int64_t> count;
  std::int64_t changed = 0;
};

// map (in the data's coordinates) applied to centers in stored coordinates.
void map_stored(const CenterMap& map, std::vector<double>& cen, int k, const std::vector<double>& shift) {
  const std::size_t kk = static_cast<std::size_t>(k);
  for (std::size_t j = 0; j < shift.size(); ++j)
    for (std::size_t c = 0; c < kk; ++c) cen[c + kk * j] += shift[j];
  map(cen.data(), k);
  for (std::size_t j = 0; j < shift.size(); ++j)
    for (std::size_t c = 0; c < kk; ++c) cen[c + kk * j] -= shift[j];
}

Combined combine_steps(const std::vector<Engine*>& parts, const std::vector<double>& cen, int k,
                       const std::vector<int>& scale, bool first) {
  Combined c;
  std::vector<StepSums> sums(parts.size());
  for_each_part(static_cast<int>(parts.size()),
                [&](int p) { sums[p] = parts[p]->step(cen.data(), k, scale, first); });
  for (StepSums& p : sums) {
    if (c.sum.empty()) {
      c.sum.swap(p.sum);
      c.count.swap(p.count);
    } else {
      for (std::size_t i = 0; i < c.sum.size(); ++i) add_fixed(c.sum[i], p.sum[i]);
      for (int j = 0; j < k; ++j) c.count[j] += p.count[j];
    }
    c.changed += p.changed;
  }
  return c;
}

}  // namespace

LloydFit lloyd_parts(const std::vector<Engine*>& parts, const double* centers, int k, int max_iter,
                     IterationObserver* observer, const CenterMap& map, Labels into) {
  const double t_start = wall_seconds();
  if (parts.empty()) throw EngineError(EngineError::Kind::kInvalid, "lloyd_parts: no parts");
  for (Engine* e : parts)
    if (e->weights()) throw EngineError(EngineError::Kind::kUnsupported, "lloyd_parts: observation weights are not supported yet");
  const int d = parts[0]->d();
  const std::size_t kd = static_cast<std::size_t>(k) * d;
  // The scales of the sums from the maxima of all parts; the shift is the
  // parts' common one.
  const int P = static_cast<int>(parts.size());
  std::vector<std::vector<double>> part_max(P), part_shift(P);
  for_each_part(P, [&](int p) {
    part_max[p] = parts[p]->column_maxabs();
    part_shift[p] = parts[p]->shift();
  });
  std::vector<double> maxabs(d, 0.0);
  for (const std::vector<double>& m : part_max)
    for (int j = 0; j < d; ++j) maxabs[j] = std::max(maxabs[j], m[j]);
  const std::vector<int> scale = step_scales(maxabs);
  const std::vector<double> shift = part_shift[0];
  for (const std::vector<double>& s : part_shift)  // sums in different stored coordinates cannot be added
    if (s != shift)
      throw EngineError(EngineError::Kind::kInvalid, "lloyd_parts: the parts store their rows less different shifts");

  std::vector<double> cen(kd);  // stored coordinates
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) cen[c + static_cast<std::size_t>(k) * j] = centers[c + static_cast<std::size_t>(k) * j] - shift[j];
  LloydFit res;
  res.cluster = std::move(into);
  res.iter = max_iter + 1;
  std::vector<std::int64_t> count(k, 0);
  for (int it = 0; it < max_iter; ++it) {
    Combined c = combine_steps(parts, cen, k, scale, it == 0);
    count = c.count;
    if (observer && !observer->iteration(it + 1, c.changed, NAN)) throw Interrupted();
    if (c.changed == 0) {
      res.iter = it + 1;
      break;
    }
    cen = centers_from_sums(c.sum, c.count, scale, k);
    if (map) map_stored(map, cen, k, shift);
  }
  // Within-SS with the final centers and labels, in two passes over the parts.
  std::vector<std::vector<std::uint32_t>> part_term(P);
  for_each_part(P, [&](int p) { part_term[p] = parts[p]->withinss_maxterm(cen.data(), k); });
  std::vector<std::uint32_t> maxterm(k, 0);
  for (const std::vector<std::uint32_t>& m : part_term)
    for (int c = 0; c < k; ++c) maxterm[c] = std::max(maxterm[c], m[c]);
  std::vector<std::vector<Fixed128>> part_wss(P);
  for_each_part(P, [&](int p) { part_wss[p] = parts[p]->withinss_sums(cen.data(), k, maxterm); });
  std::vector<Fixed128> wsum(k, Fixed128{0, 0});
  for (const std::vector<Fixed128>& w : part_wss)
    for (int c = 0; c < k; ++c) add_fixed(wsum[c], w[c]);
  res.withinss = withinss_from_sums(wsum, maxterm);
  res.size.resize(k);
  for (int c = 0; c < k; ++c) res.size[c] = static_cast<int>(count[c]);
  res.centers.resize(kd);
  for (int j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) res.centers[c + static_cast<std::size_t>(k) * j] = cen[c + static_cast<std::size_t>(k) * j] + shift[j];
  std::vector<std::vector<int>> part_labels(P);
  for_each_part(P, [&](int p) { part_labels[p] = parts[p]->labels(); });
  std::vector<std::size_t> first(P + 1, 0);  // each part's first row
  for (int p = 0; p < P; ++p) first[p + 1] = first[p] + part_labels[p].size();
  res.cluster.resize(first[P]);
  for_each_part(P, [&](int p) { std::copy(part_labels[p].begin(), part_labels[p].end(), res.cluster.begin() + first[p]); });
  res.seconds_compute = wall_seconds() - t_start;
  return res;
}

}  // namespace gk
