/**
 * Go's sort package, as far as strategicpatch's output depends on it. Its comparators are not strict
 * orders (`less` answers true for equal keys, or for elements missing from the order list), so the
 * result depends on the algorithm, and kubectl's patches show it (the order of list items, which of two
 * items with the same merge key comes first). These are ports of the algorithms in Go's
 * sort/zsortfunc.go, operating in place.
 */

type Less = (i: number, j: number) => boolean;

function swap(a: unknown[], i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

function insertionSort(data: unknown[], less: Less, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) {
    for (let j = i; j > a && less(j, j - 1); j--) swap(data, j, j - 1);
  }
}

/**
 * sort.Sort. Go runs pdqsort, which is an insertion sort up to 12 elements; this is the insertion sort
 * for every length (the same result whenever `less` is a strict order, i.e. without duplicate keys).
 */
export function goSort(data: unknown[], less: Less): void {
  insertionSort(data, less, 0, data.length);
}

/** sort.SliceStable: insertion sort of blocks of 20, then SymMerge. */
export function goSliceStable(data: unknown[], less: Less): void {
  const n = data.length;
  let blockSize = 20;
  let a = 0;
  let b = blockSize;
  while (b <= n) {
    insertionSort(data, less, a, b);
    a = b;
    b += blockSize;
  }
  insertionSort(data, less, a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(data, less, a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(data, less, a, m, n);
    blockSize *= 2;
  }
}

function symMerge(data: unknown[], less: Less, a: number, m: number, b: number): void {
  if (m - a === 1) {
    let i = m;
    let j = b;
    while (i < j) {
      const h = (i + j) >>> 1;
      if (less(h, a)) i = h + 1;
      else j = h;
    }
    for (let k = a; k < i - 1; k++) swap(data, k, k + 1);
    return;
  }
  if (b - m === 1) {
    let i = a;
    let j = m;
    while (i < j) {
      const h = (i + j) >>> 1;
      if (!less(m, h)) i = h + 1;
      else j = h;
    }
    for (let k = m; k > i; k--) swap(data, k, k - 1);
    return;
  }
  const mid = (a + b) >>> 1;
  const n = mid + m;
  let start: number;
  let r: number;
  if (m > mid) {
    start = n - b;
    r = mid;
  } else {
    start = a;
    r = m;
  }
  const p = n - 1;
  while (start < r) {
    const c = (start + r) >>> 1;
    if (!less(p - c, c)) start = c + 1;
    else r = c;
  }
  const end = n - start;
  if (start < m && m < end) rotate(data, start, m, end);
  if (a < start && start < mid) symMerge(data, less, a, start, mid);
  if (mid < end && end < b) symMerge(data, less, mid, end, b);
}

function rotate(data: unknown[], a: number, m: number, b: number): void {
  let i = m - a;
  let j = b - m;
  while (i !== j) {
    if (i > j) {
      swapRange(data, m - i, m, j);
      i -= j;
    } else {
      swapRange(data, m - i, m + j - i, i);
      j -= i;
    }
  }
  swapRange(data, m - i, m, i);
}

function swapRange(data: unknown[], a: number, b: number, n: number): void {
  for (let i = 0; i < n; i++) swap(data, a + i, b + i);
}
