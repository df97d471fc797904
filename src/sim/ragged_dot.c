/*
 * src/sim/ragged_dot.c - chlo.ragged_dot.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* A dot_general whose lhs ragged dimension is cut into groups by the
 * 1-D group_sizes: mode 1 (ragged lhs non-contracting dimension): rows
 * of group g multiply rhs slice g of rhs_group_dimensions, rows past the
 * groups give 0; mode 2 (ragged contracting dimension): result slice g
 * contracts only the group's range; mode 3 (ragged batch dimension): a
 * plain dot_general. */
typedef struct sim_ragged {
  sim_la_cvt cv;
  int mode;
  int64_t G, B, M, N, K;
  const int64_t *lb, *rb, *lm, *rn, *lk, *rk;
  const int64_t *m_r, *k_r; /* ragged index of each m (mode 1), k (mode 2) */
  int64_t rgs;              /* rhs stride of the group dimension */
  xrt_dtype gt;
  int32_t ends;             /* pseudo value: G cumulative group ends */
} sim_ragged;

static void sim_ragged_elem(const sim_ragged *g, const char *L,
                            const char *R, int64_t lo, int64_t ro,
                            int64_t kmin, int64_t kmax, sim_la_acc *acc) {
  size_t cs = g->cv.cs;
  for (int64_t k = 0; k < g->K; k++) {
    if (g->mode == 2 && (g->k_r[k] < kmin || g->k_r[k] >= kmax)) continue;
    g->cv.dotn(acc, L + (size_t)(lo + g->lk[k]) * cs, 0,
               R + (size_t)(ro + g->rk[k]) * cs, 0, 1);
  }
}

static xrt_status sim_run_ragged(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_ragged *g = (const sim_ragged *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]], *res;
  int64_t *ends = (int64_t *)vals[g->ends], acc_end = 0;
  (void)cx;
  for (int64_t i = 0; i < g->G; i++) { /* negative sizes count as 0 */
    int64_t s = sim_la_geti(g->gt, vals[st->in[2]], i);
    if (s > 0 && acc_end <= INT64_MAX - s) acc_end += s;
    ends[i] = acc_end;
  }
  sim_la_cvt_pre(&g->cv, vals, &l, &r, &res, out);
  const char *L = (const char *)l, *R = (const char *)r;
  char *O = (char *)res;
  int64_t groups = g->mode == 2 ? g->G : 1, o = 0;
  for (int64_t gi = 0; gi < groups; gi++) {
    int64_t kmin = gi ? ends[gi - 1] : 0, kmax = g->mode == 2 ? ends[gi] : 0;
    for (int64_t b = 0; b < g->B; b++)
      for (int64_t m = 0; m < g->M; m++) {
        int64_t grp = 0;
        if (g->mode == 1)
          while (grp < g->G && g->m_r[m] >= ends[grp]) grp++;
        for (int64_t n = 0; n < g->N; n++, o++) {
          sim_la_acc acc;
          memset(&acc, 0, sizeof acc);
          if (grp < g->G)
            sim_ragged_elem(g, L, R, g->lb[b] + g->lm[m],
                            g->rb[b] + g->rn[n] + grp * g->rgs, kmin, kmax,
                            &acc);
          g->cv.store(O + (size_t)o * g->cv.cs, &acc);
        }
      }
  }
  sim_la_cvt_post(&g->cv, vals, out);
  return XRT_OK;
}

/* For each entry of the offset table over dims (row-major), the index
 * along dimension `which` of x. */
static const int64_t *sim_ragged_index(sim_fcc *fc, const xrt_shape *x,
                                       const int64_t *dims, int64_t nd,
                                       int64_t which) {
  int64_t sizes[XRT_MAX_RANK], st1[XRT_MAX_RANK], c = 1;
  for (int64_t j = 0; j < nd; j++) {
    sizes[j] = x->dims[dims[j]];
    st1[j] = dims[j] == which;
    c *= sizes[j];
  }
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  if (t) sim_enum_offsets(nd, sizes, st1, NULL, t, NULL);
  return t;
}

static int sim_ragged_has(const int64_t *v, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

SIM_PRIVATE xrt_status sim_lower_chlo_ragged_dot(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "ragged_dot_dimension_numbers");
  int64_t nlb, nrb, nlc, nrc, nlr, nrg;
  const int64_t *lbd = sim_dot_field(dn, "lhs_batching_dimensions", &nlb);
  const int64_t *rbd = sim_dot_field(dn, "rhs_batching_dimensions", &nrb);
  const int64_t *lcd = sim_dot_field(dn, "lhs_contracting_dimensions", &nlc);
  const int64_t *rcd = sim_dot_field(dn, "rhs_contracting_dimensions", &nrc);
  const int64_t *lrd = sim_dot_field(dn, "lhs_ragged_dimensions", &nlr);
  const int64_t *rgd = sim_dot_field(dn, "rhs_group_dimensions", &nrg);
  if (op->num_operands != 3 || nlb != nrb || nlc != nrc || nlr != 1 ||
      nrg > 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad "
                       "ragged_dot_dimension_numbers");
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *GS = sim_shape(fc, op->operands[2]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  sim_ragged *g = (sim_ragged *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  int64_t rdim = lrd[0];
  g->mode = sim_ragged_has(lcd, nlc, rdim) ? 2
          : sim_ragged_has(lbd, nlb, rdim) ? 3 : 1;
  if (GS->rank != 1 || (g->mode == 1) != (nrg == 1))
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: only 1-D "
                       "group_sizes, with rhs_group_dimensions exactly when "
                       "the ragged dimension is a non-contracting one",
                       op->name);
  g->G = GS->dims[0];
  g->gt = GS->dtype;
  int64_t lf[XRT_MAX_RANK], rf[XRT_MAX_RANK], nlf, nrf;
  nlf = sim_free_dims(L, lbd, nlb, lcd, nlc, lf);
  nrf = sim_free_dims(R, rbd, nrb, rcd, nrc, rf);
  if (g->mode == 1) { /* the group dimension is not a result dimension */
    int64_t k = 0;
    for (int64_t i = 0; i < nrf; i++)
      if (rf[i] != rgd[0]) rf[k++] = rf[i];
    nrf = k;
  }
  int64_t *rb = NULL, *rk = NULL;
  g->lb = sim_dot_table(fc, L, lbd, nlb, R, rbd, &rb, &g->B);
  g->lk = sim_dot_table(fc, L, lcd, nlc, R, rcd, &rk, &g->K);
  g->lm = sim_dot_table(fc, L, lf, nlf, NULL, NULL, NULL, &g->M);
  g->rn = sim_dot_table(fc, R, rf, nrf, NULL, NULL, NULL, &g->N);
  if (!g->lb || !g->lk || !g->lm || !g->rn) return XRT_RESOURCE_EXHAUSTED;
  g->rb = rb, g->rk = rk;
  if (g->mode == 1) {
    int64_t rs[XRT_MAX_RANK];
    sim_strides(R, rs);
    g->rgs = rs[rgd[0]];
    g->m_r = sim_ragged_index(fc, L, lf, nlf, rdim);
    if (!g->m_r) return XRT_RESOURCE_EXHAUSTED;
    if (R->dims[rgd[0]] != g->G) goto bad;
  }
  if (g->mode == 2 &&
      !(g->k_r = sim_ragged_index(fc, L, lcd, nlc, rdim)))
    return XRT_RESOURCE_EXHAUSTED;
  if ((g->mode == 2 ? g->G : 1) * g->B * g->M * g->N != sim_numel(O))
    goto bad;
  xrt_status rc = sim_la_cvt_init(fc, op, &g->cv, op->operands[0],
                                  op->operands[1]);
  if (!rc) rc = sim_temp(fc, sizeof(int64_t) * (size_t)(g->G + 1), &g->ends);
  st->data = g;
  st->run = sim_run_ragged;
  return rc;
bad:
  return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                     "shape does not follow from the operands", op->name);
}
