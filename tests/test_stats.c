/* test_stats.c — core/stats: median (odd and even counts, unsorted input),
 * mean, sample standard deviation, min and max against values worked by hand. */
#include <math.h>

#include "core/stats.h"
#include "tests/test.h"

TEST(stats_summarize) {
    const double odd[5] = {4, 1, 9, 2, 7};   /* sorted 1 2 4 7 9 */
    Summary s = summarize(odd, 5);
    CHECK_EQ_INT(s.n, 5);
    CHECK_NEAR(s.median, 4, 0);
    CHECK_NEAR(s.mean, 4.6, 1e-12);
    /* squares of deviations: 0.36 + 12.96 + 19.36 + 6.76 + 5.76 = 45.2; / 4 */
    CHECK_NEAR(s.std, sqrt(11.3), 1e-12);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 9, 0);
    CHECK_NEAR(odd[0], 4, 0);   /* the input is not reordered */
    const double even[4] = {3, -1, 10, 2};   /* sorted -1 2 3 10 */
    s = summarize(even, 4);
    CHECK_NEAR(s.median, 2.5, 0);
    CHECK_NEAR(s.mean, 3.5, 1e-12);
    CHECK_NEAR(s.std, sqrt((0.25 + 20.25 + 42.25 + 2.25) / 3), 1e-12);
    const double one = 0.25;
    s = summarize(&one, 1);
    CHECK(s.median == 0.25 && s.mean == 0.25 && s.std == 0 && s.min == 0.25 && s.max == 0.25);
}
