/**
 * Every page's times in the reader's zone (core/times.js), and again each minute ("5 min
 * ago" stays true).
 *
 * @module core/local_times
 */

import { MINUTE, showTimes } from "./times.js";

showTimes();
setInterval(showTimes, MINUTE);
