// bounds_model.cpp: a CPU model of the CUDA engine's bounded Lloyd iterations
// (src/cuda/detail/bounds_kernels.cuh, the batch logic of src/cuda/lloyd.cu):
// the same bounds, margins, rounding directions, fixed-point sums and
// plain/bounded switching, in plain loops, checked against plain Lloyd on
// blobs, scaled and shifted data, ties, duplicates and empty clusters.  It
// found the kernel bug where a negative lower bound "proved" labels (its
// square is positive); it runs without a GPU:
//   make -C tools/cuda-dev bounds_model && tools/cuda-dev/bounds_model
// Every line ends "ok"; a MISMATCH is a logic error of the kernels' design.
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <vector>
#include "fixed_point.h"
using namespace gk;
typedef long long ll;
static double ru(double v) { return std::nextafter(v, INFINITY); }
static double rd(double v) { return std::nextafter(v, -INFINITY); }
struct M { double g_up, g_dn, inv_dn, inv_up, eta, eta2; };
static bool proven(double u, double l, const M& m) { return l > 0 && ru(ru(ru(u*u)*m.g_up) + m.eta2) < rd(rd(l*l)*m.g_dn); }
static float upper_of(double D, const M& m) { double v = std::sqrt(ru(ru(D + m.eta) * m.inv_dn)); v = ru(v); float f = (float)v; if ((double)f < v) f = std::nextafter(f, INFINITY); return f; }
static float lower_of(double D, const M& m) { double v = rd(rd(D - m.eta) * m.inv_up); if (!(v > 0)) return 0; v = rd(std::sqrt(v)); float f = (float)v; if ((double)f > v) f = std::nextafter(f, -INFINITY); return f; }
struct Data { ll n; int d; std::vector<double> x; };
static double dist(const Data& X, ll i, const std::vector<double>& c, int k, int j) {
  double s = 0; for (int a = 0; a < X.d; ++a) { double t = X.x[i + X.n*a] - c[j + (size_t)k*a]; double sq = t*t; s = a == 0 ? sq : s + sq; } return s; }
static void full(const Data& X, ll i, const std::vector<double>& c, int k, int& bi, double& best, double& second) {
  best = second = INFINITY; bi = -1;
  for (int j = 0; j < k; ++j) { double dd = dist(X, i, c, k, j); if (dd < best) { second = best; best = dd; bi = j; } else if (dd < second) second = dd; } }
struct Fit { std::vector<int> lab; std::vector<double> c; int iter; };
static std::vector<int> scales(const Data& X) { std::vector<int> s(X.d); for (int a=0;a<X.d;++a){double m=0; for(ll i=0;i<X.n;++i) m=std::max(m,std::fabs(X.x[i+X.n*a])); s[a]=limb_scale(m);} return s; }
static void addq(std::vector<Fixed128>& acc, const Data& X, ll i, int c, int k, const std::vector<int>& sc, ll sign) {
  for (int a = 0; a < X.d; ++a) { ll q = round_fixed(X.x[i + X.n*a], pow2(sc[a])); add_fixed(acc[c + (size_t)k*a], sign*q); } }
static void update(std::vector<double>& c, const std::vector<Fixed128>& acc, const std::vector<unsigned>& cnt, int k, int d, const std::vector<int>& sc) {
  for (int a=0;a<d;++a) for (int j=0;j<k;++j){ size_t e=j+(size_t)k*a; c[e]=from_fixed(acc[e].lo,acc[e].hi,sc[a])/(double)cnt[j]; } }
static Fit plain(const Data& X, std::vector<double> c, int k, int max_iter) {
  auto sc = scales(X); std::vector<int> lab(X.n, -1); int it; int conv = -1;
  for (it = 0; it < max_iter; ++it) {
    std::vector<Fixed128> acc((size_t)k*X.d, Fixed128{0,0}); std::vector<unsigned> cnt(k,0); ll ch=0;
    for (ll i=0;i<X.n;++i){ int b; double bs, se; full(X,i,c,k,b,bs,se); if (b<0) b = lab[i]>=0?lab[i]:0; if (b!=lab[i]){lab[i]=b;++ch;} addq(acc,X,i,b,k,sc,1); cnt[b]++; }
    if (ch==0){conv=it+1;break;}
    update(c,acc,cnt,k,X.d,sc);
  }
  return Fit{lab, c, conv>0?conv:max_iter+1};
}
static Fit bounded(const Data& X, std::vector<double> c, int k, int max_iter, int bsz_plain, double kEnter, double kLeave, int* nfall) {
  auto sc = scales(X); ll n = X.n; int d = X.d;
  double gamma=(d+4.0)*0x1p-53*1.1; M m{std::nextafter(1.0+gamma,2.0),std::nextafter(1.0-gamma,0.0),std::nextafter(1.0/(1.0-gamma),2.0),std::nextafter(1.0/(1.0+gamma),0.0),(d+2.0)*0x1p-1070,0}; m.eta2=2*m.eta;
  std::vector<int> lab(n,-1); std::vector<float> u(n), l(n); std::vector<double> move(k,0), prev; double top1=0,top2=0; int topi=-1;
  std::vector<Fixed128> acc((size_t)k*d, Fixed128{0,0}); std::vector<unsigned> cnt(k,0);
  int it = 0; bool bmode=false, first=false; ll last_changed=0; bool flag=false; int conv=-1; *nfall=0;
  auto moves = [&](){ topi=-1; top1=top2=0; for(int j=0;j<k;++j){double s=0; bool nan=false; for(int a=0;a<d;++a){double A=prev[j+(size_t)k*a],B=c[j+(size_t)k*a]; nan|=std::isnan(A)||std::isnan(B); double t=ru(std::fabs(A-B)*(1.0+0x1p-51)); s=ru(s+ru(t*t));} double mv=nan?0:ru(std::sqrt(s)); move[j]=mv; if(mv>top1){top2=top1;top1=mv;topi=j;} else if(mv>top2) top2=mv;} };
  while (it < max_iter && !flag) {
    int b = std::min(bmode ? 16 : bsz_plain, max_iter - it);
    ll active_sum = 0;
    for (int q = 0; q < b && !flag && it < max_iter; ++q) {
      ll ch = 0;
      if (!bmode) {
        std::fill(acc.begin(),acc.end(),Fixed128{0,0}); std::fill(cnt.begin(),cnt.end(),0u);
        for (ll i=0;i<n;++i){int bb; double bs,se; full(X,i,c,k,bb,bs,se); if(bb<0) bb=lab[i]>=0?lab[i]:0; if(bb!=lab[i]){lab[i]=bb;++ch;} addq(acc,X,i,bb,k,sc,1); cnt[bb]++;}
        if (ch==0){flag=true;conv=it+1;} else update(c,acc,cnt,k,d,sc);
      } else if (first) {
        std::fill(acc.begin(),acc.end(),Fixed128{0,0}); std::fill(cnt.begin(),cnt.end(),0u);
        for (ll i=0;i<n;++i){int bb; double bs,se; full(X,i,c,k,bb,bs,se); if(bb<0) bb=lab[i]>=0?lab[i]:0; if(bb!=lab[i]){lab[i]=bb;++ch;} u[i]=upper_of(bs,m); l[i]=lower_of(se,m);}
        for (ll i=0;i<n;++i){addq(acc,X,i,lab[i],k,sc,1); cnt[lab[i]]++;}
        prev=c; if (ch==0){flag=true;conv=it+1;} else update(c,acc,cnt,k,d,sc); moves(); first=false;
      } else {
        std::vector<ll> act;
        for (ll i=0;i<n;++i){int a=lab[i]; double ub=ru((double)u[i]+move[a]); double lb=rd((double)l[i]-(a==topi?top2:top1)); bool ac=false;
          if(!proven(ub,lb,m)){ ub=(double)upper_of(dist(X,i,c,k,a),m); ac=!proven(ub,lb,m);} float uf=(float)ub; if((double)uf<ub) uf=std::nextafter(uf,INFINITY); u[i]=uf; float lf = lb>0?(float)lb:0.f; if(lb>0 && (double)lf>lb) lf=std::nextafter(lf,-INFINITY); l[i]=lf; if(ac) act.push_back(i);}
        active_sum += act.size();
        for (ll i: act){int bb; double bs,se; full(X,i,c,k,bb,bs,se); int old=lab[i]; if(bb<0) bb=old; if(bb!=old){lab[i]=bb; addq(acc,X,i,old,k,sc,-1); addq(acc,X,i,bb,k,sc,1); cnt[old]--; cnt[bb]++; ++ch;} u[i]=upper_of(bs,m); l[i]=lower_of(se,m);}
        prev=c; if (ch==0){flag=true;conv=it+1;} else update(c,acc,cnt,k,d,sc); moves();
      }
      last_changed = ch; ++it;
    }
    if (flag) break;
    if (!bmode && (double)last_changed <= kEnter*n) { bmode = first = true; continue; }
    if (bmode && (double)active_sum > kLeave*n*b) { bmode=false; ++*nfall; }
  }
  return Fit{lab, c, conv>0?conv:max_iter+1};
}
static void run(const char* name, const Data& X, const std::vector<double>& c0, int k, int iters) {
  Fit p = plain(X,c0,k,iters);
  for (int mode = 0; mode < 3; ++mode) {
    int nf; Fit b = mode == 0 ? bounded(X,c0,k,iters,1,2.0,0.5,&nf) : mode == 1 ? bounded(X,c0,k,iters,4,0.05,0.5,&nf) : bounded(X,c0,k,iters,1,2.0,0.01,&nf);
    ll nd=0; for(ll i=0;i<X.n;++i) nd += p.lab[i]!=b.lab[i];
    bool cs = p.c.size()==b.c.size(); for(size_t e=0;cs && e<p.c.size();++e) cs = (std::isnan(p.c[e]) && std::isnan(b.c[e])) || p.c[e]==b.c[e];
    printf("%-22s mode %d: plain iter %d bounded iter %d labels differ %lld centers same %d fallbacks %d %s\n",name,mode,p.iter,b.iter,nd,(int)cs,nf, (nd||!cs||p.iter!=b.iter)?"MISMATCH":"ok");
  }
}
int main(int argc, char** argv) {
  std::mt19937_64 g(1); std::normal_distribution<double> N(0,2); std::uniform_real_distribution<double> U(-10,10);
  int shapes[][3] = {{20000,2,10},{30011,3,64},{20000,16,40},{4099,8,300},{5000,13,33},{20000,1,100}};
  for (auto& s: shapes) {
    Data X; X.n=s[0]; X.d=s[1]; int k=s[2]; int kt=std::max(2,k/2);
    std::vector<double> ctr((size_t)kt*X.d); for(auto& v:ctr) v=U(g);
    X.x.resize(X.n*X.d); for(ll i=0;i<X.n;++i){int j=g()%kt; for(int a=0;a<X.d;++a) X.x[i+X.n*a]=ctr[j*X.d+a]+N(g);}
    std::vector<double> c0((size_t)k*X.d); for(int j=0;j<k;++j) for(int a=0;a<X.d;++a) c0[j+(size_t)k*a]=X.x[j+X.n*a];
    char name[64]; snprintf(name,64,"blobs %lldx%dx%d",(ll)X.n,X.d,k); run(name,X,c0,k,200);
    for (double sc : {1e-300, 1e-150, 1e20, 1e150}) { Data Y=X; for(auto& v:Y.x) v*=sc; auto c1=c0; for(auto& v:c1) v*=sc; snprintf(name,64,"scale %g d=%d",sc,X.d); run(name,Y,c1,k,60); }
    { Data Y=X; for(auto& v:Y.x) v+=1e8; auto c1=c0; for(auto& v:c1) v+=1e8; run("offset 1e8",Y,c1,k,60); }
    { Data Y=X; for(auto& v:Y.x) v=std::round(v); std::vector<double> c1((size_t)k*X.d); for(int j=0;j<k;++j) for(int a=0;a<X.d;++a) c1[j+(size_t)k*a]=Y.x[j*37+X.n*a]; run("rounded (ties)",Y,c1,k,100); }
  }
  { // grid with exact ties, duplicated 3x
    Data X; X.d=2; X.n=41*41*3; X.x.resize(X.n*2); ll i=0; for(int r=0;r<3;++r) for(int a=0;a<41;++a) for(int b=0;b<41;++b){X.x[i]=a; X.x[i+X.n]=b; ++i;}
    std::vector<double> c0(10); int rows[5]={1,2,3,4,5}; for(int j=0;j<5;++j){c0[j]=X.x[rows[j]]; c0[j+5]=X.x[rows[j]+X.n];} run("grid duplicates",X,c0,5,100);
  }
  { // empty clusters: far centers
    Data X; X.d=4; X.n=20000; X.x.resize(X.n*4); for(auto& v:X.x) v=N(g);
    int k=8; std::vector<double> c0((size_t)k*4); for(int j=0;j<6;++j) for(int a=0;a<4;++a) c0[j+k*a]=X.x[j+X.n*a]; for(int a=0;a<4;++a){c0[6+k*a]=50; c0[7+k*a]=-50;} run("empty clusters",X,c0,k,100);
  }
}
