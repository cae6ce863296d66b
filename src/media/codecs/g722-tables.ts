/**
 * Constant tables of ITU-T G.722 for the 64 kbit/s mode, under the names the
 * Recommendation gives them (in brackets) where they differ. Values are the fixed-point integers
 * of the Recommendation; the comments say what scale they are on.
 */

/**
 * Lower-band decision levels [Q6], × 2^-12 of the scale factor, for magnitude intervals 1…29
 * (entry 0 is unused). An error magnitude below level m falls in interval m; above the last one,
 * in interval 30.
 */
export const LOW_DECISION_LEVELS = Int32Array.from([
  0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473, 530, 587, 650, 714, 786, 858, 940, 1023,
  1121, 1219, 1339, 1458, 1612, 1765, 1980, 2195, 2557, 2919,
]);

/** The 6-bit lower-band code of interval m (1…30) for a negative [ILN] or positive [ILP] error. */
export const LOW_CODE_NEGATIVE = Uint8Array.from([
  0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10,
  9, 8, 7, 6, 5, 4,
]);
export const LOW_CODE_POSITIVE = Uint8Array.from([
  0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38,
  37, 36, 35, 34, 33, 32,
]);

/**
 * Lower-band inverse quantiser output of each 6-bit code [QM6], × 2^-15 of the scale factor.
 * Codes 0…3 are never sent by an encoder; the Recommendation decodes them like 63.
 */
export const LOW_LEVELS_6BIT = Int32Array.from([
  -136, -136, -136, -136, -24808, -21904, -19008, -16704, -14984, -13512, -12280, -11192, -10232,
  -9360, -8576, -7856, -7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576, -3168, -2776, -2400,
  -2032, -1688, -1360, -1040, -728, 24808, 21904, 19008, 16704, 14984, 13512, 12280, 11192, 10232,
  9360, 8576, 7856, 7192, 6576, 6000, 5456, 4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032, 1688,
  1360, 1040, 728, 432, 136, -432, -136,
]);

/**
 * Output of the 4-bit quantiser the lower-band predictor and scale factor adapt on [QM4], indexed
 * by the 6-bit code's top 4 bits (the embedded code), × 2^-15 of the scale factor.
 */
export const LOW_LEVELS_4BIT = Int32Array.from([
  0, -20456, -12896, -8968, -6288, -4240, -2584, -1200, 20456, 12896, 8968, 6288, 4240, 2584, 1200,
  0,
]);

/**
 * Log scale factor multiplier [WL] of each 4-bit code, i.e. WL[RIL42[code]]: large errors widen
 * the quantiser, small ones narrow it. × 2^-11 in the log2 domain.
 */
export const LOW_LOG_STEP_WEIGHTS = Int32Array.from([
  -60, 3042, 1198, 538, 334, 172, 58, -30, 3042, 1198, 538, 334, 172, 58, -30, -60,
]);

/** Upper-band decision level [Q2], × 2^-12 of the scale factor. */
export const HIGH_DECISION_LEVEL = 564;

/**
 * Upper-band inverse quantiser output of each 2-bit code [QM2], × 2^-15 of the scale factor:
 * 0 large negative, 1 small negative, 2 large positive, 3 small positive.
 */
export const HIGH_LEVELS = Int32Array.from([-7408, -1616, 7408, 1616]);

/** Log scale factor multiplier of each 2-bit code, i.e. WH[RIH2[code]]. */
export const HIGH_LOG_STEP_WEIGHTS = Int32Array.from([798, -214, 798, -214]);

/**
 * Antilog table [ILB]: 2^(i/32) × 2048 as the Recommendation rounds it, for the fractional part of
 * the log scale factor (its bits 6…10).
 */
export const ANTILOG = Int32Array.from([
  2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435, 2489, 2543, 2599, 2656, 2714, 2774, 2834,
  2896, 2960, 3025, 3091, 3158, 3228, 3298, 3371, 3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008,
]);
