// dfilter_emu.cpp: df_certified (src/cuda/detail/dfilter.cuh, extracted by
// the Makefile) on the CPU: random, offset and lattice data, fp32 dot
// products; every certified label must be the exact rule's.  Replacing the
// test by "lowest < second lowest" gives wrong labels (the check works).
// The candidate pass's threshold (df_cand_threshold, df_candidates.cuh):
// for every point with a finite bound of its lowest center, the exact
// rule's choice must have w below it (dropping the threshold's check of
// df_lower, or starting it 2^-10 lower, fails this).
// The settle pass (df_settle.cuh) on float distances in the difference
// form: the exact rule's choice must have F at most thr
// (df_settle_threshold), and F between its image and that of the filter's
// lowest center at most stop (df_settle_stop); `./dfilter_emu naive`
// (thr = the least F, stop = (2 sqrt(F_1))^2: no slack) fails.  Where one
// center alone has F at most thr, k_df_settle takes it without an exact
// distance: it must be the exact rule's choice.
//   make dfilter_emu && ./dfilter_emu
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cfenv>
#include <random>
#include <vector>
#include <algorithm>
#include "df_certified_shim.h"
using namespace gk;
static float tf32(float a){unsigned u=__float_as_uint(a); u=(u+0x1000u)&~0x1fffu; return __uint_as_float(u);}
int main(int argc, char **argv){
  const bool naive = argc > 1 && !strcmp(argv[1], "naive");
  std::mt19937_64 g(1); long long cert=0,tot=0,bad=0,cpts=0,ccands=0,cnone=0,cbad=0,spts=0,scands=0,sbad=0,snear=0,sone=0;
  for(int tc=0;tc<2;++tc)
  for(int trial=0;trial<300;++trial){
    int d = 1+trial%130, k = 2+trial%50; double off = (trial%3==0)?1e8:0, sp = (trial%5==0)?1e-3:1;
    bool lat = trial%4==1;
    std::uniform_real_distribution<double> U(-1,1);
    int n=200; std::vector<double> x(n*d), c(k*d), mean(d,0);
    for(auto&v:x) v= lat? off+ (double)(g()%3) : off+sp*U(g);
    for(int j=0;j<k;++j) for(int q=0;q<d;++q) c[j*d+q]= lat? off+(double)(g()%3)*0.5 : off+sp*U(g);
    double M=0; for(auto v:x) M=std::max(M,fabs(v));
    for(int q=0;q<d;++q){for(int i=0;i<n;++i)mean[q]+=x[i*d+q]; mean[q]/=n;}
    int e; frexp(2*M,&e); double s=ldexp(1.0,-e);
    init::FloatImage im{nullptr,s,(float)(1.01*(ldexp(1.0,-24)+ldexp(1.0,-52)+(tc?ldexp(1.0,-11):0.0))),(float)(sqrt(d)*1.001),(float)((8.0*(2*d+8)+(tc?0:32))*ldexp(1.0,-24)),1.01*(d+3)*ldexp(1.0,-53)};
    std::vector<float> cb(k*d), nb(k); float nbmax=0;
    for(int j=0;j<k;++j){float q=0; for(int t=0;t<d;++t){cb[j*d+t]=(float)((c[j*d+t]-mean[t])*s); if(tc) cb[j*d+t]=tf32(cb[j*d+t]); q=fmaf(cb[j*d+t],cb[j*d+t],q);} nb[j]=q; nbmax=std::max(nbmax,q);}
    unsigned cnt[3]={0,0,__float_as_uint(nbmax)};
    DFArgs a{im, ldexp(d+1.0,-1074+2*e)+4.9406564584124654e-324,cnt};
    for(int i=0;i<n;++i){
      std::vector<float> ai(d); float na=0; for(int t=0;t<d;++t){ai[t]=(float)((x[i*d+t]-mean[t])*s); if(tc) ai[t]=tf32(ai[t]); na=fmaf(ai[t],ai[t],na);}
      float wb=INFINITY, ws=INFINITY; int bi=-1; std::vector<float> wv(k);
      for(int j=0;j<k;++j){ float dot=0; for(int t=0;t<d;++t) dot=fmaf(ai[t],cb[j*d+t],dot);
        float w=__fmaf_rd(-2.f,dot,__fmaf_rd(-im.kappa,nb[j],nb[j])); wv[j]=w;
        if(w<wb){ws=wb;wb=w;bi=j;} else if(w<ws) ws=w; }
      // exact
      double bd=INFINITY; int eb=-1;
      for(int j=0;j<k;++j){double acc=0; for(int t=0;t<d;++t){double tt=x[i*d+t]-c[j*d+t]; acc=acc+tt*tt;} if(acc<bd){bd=acc;eb=j;}}
      ++tot;
      if(!tc){  // the settle pass: F_j = sum fl(a - b)^2 (fmaf), thr from the least
        std::vector<float> F(k); float fmin=NAN;
        for(int j=0;j<k;++j){ float f=0; for(int t=0;t<d;++t){ volatile float tt=ai[t]-cb[j*d+t]; f=fmaf(tt,tt,f);} F[j]=f; fmin=std::fmin(fmin,f); }
        const float thr = naive ? fmin : df_settle_threshold(fmin,na,d,df_bound(a));
        int nc=0, one=-1; for(int j=0;j<k;++j) if(F[j]<=thr){++nc; one=j;} ++spts; scands+=nc;
        if(nc==1){ ++sone; if(one!=eb){++sbad; if(sbad<5) printf("BAD settle single trial %d i %d d %d k %d\n",trial,i,d,k);} }
        if(!(F[eb]<=thr)){++sbad; if(sbad<5) printf("BAD settle trial %d i %d d %d k %d\n",trial,i,d,k);}
        // the walk of the lowest center's list: F between the images of bi and eb
        const float stop = naive ? 4.f*F[bi] : df_settle_stop(F[bi],na,d,df_bound(a));
        float fcc=0; for(int t=0;t<d;++t){ volatile float tt=cb[bi*d+t]-cb[eb*d+t]; fcc=fmaf(tt,tt,fcc);}
        int nn=0; for(int j=0;j<k;++j){ float g=0; for(int t=0;t<d;++t){ volatile float tt=cb[bi*d+t]-cb[j*d+t]; g=fmaf(tt,tt,g);} nn+= g<=stop; }
        snear+=nn;
        if(!(fcc<=stop)){++sbad; if(sbad<5) printf("BAD settle stop trial %d i %d d %d k %d\n",trial,i,d,k);}
      }
      if(df_certified(wb,ws,nb[bi],na,d,df_bound(a))){ ++cert; if(bi!=eb) {++bad; printf("BAD trial %d i %d d %d k %d\n",trial,i,d,k);} }
      else if(!tc){  // the candidate pass (3xTF32 only)
        const DFBound bd_=df_bound(a); const double eps=df_eps(na,d,bd_);
        const double hi=df_upper(wb,nb[bi],na,eps,bd_);
        if(hi<1e300){
          const float wex=df_cand_threshold(hi,na,eps,bd_); ++cpts;
          if(!(wex==wex)) ++cnone;
          else { int nc=0; for(int j=0;j<k;++j) nc+= wv[j]<wex; ccands+=nc;
            if(!(wv[eb]<wex)){++cbad; printf("BAD candidates trial %d i %d d %d k %d\n",trial,i,d,k);} }
        }
      }
    }
  }
  printf("certified %lld / %lld, wrong %lld (float images, then TF32 images)\n",cert,tot,bad);
  printf("candidate pass: %lld points, %lld without a threshold, %.2f candidates a point, %lld missing the exact choice\n",
         cpts,cnone,cpts>cnone?(double)ccands/(cpts-cnone):0.0,cbad);
  printf("settle pass: %lld points, %.2f neighbours and %.2f candidates a point (%.2f%% one: no exact distance), %lld missing the exact choice\n",
         spts,spts?(double)snear/spts:0.0,spts?(double)scands/spts:0.0,spts?100.0*sone/spts:0.0,sbad);
  return bad!=0 || cbad!=0 || cnone==cpts || sbad!=0;
}
