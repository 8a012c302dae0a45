// dlrt::Shape: a tensor's dims, with std::vector<int64_t>'s interface and
// room for 8 dims inside the object, so that making or copying the shape of
// a tensor of rank <= 8 (nearly all of them) allocates nothing. A model run
// makes a shape for every value it computes; as a std::vector each one was a
// heap allocation on the run path. Higher ranks spill to the heap.
//
// Converts implicitly to and from std::vector<int64_t>, and std::span<const
// int64_t> takes it as a range, so code written against a vector of dims works.
//
// Thread-safety: a value type, as std::vector.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <span>
#include <type_traits>
#include <vector>

#include "dlrt/export.h"

namespace dlrt {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  // Dims kept inside the object; more go to the heap.
  static constexpr size_t kInline = 8;

  Shape() noexcept = default;
  explicit Shape(size_t n, int64_t value = 0) { assign(n, value); }
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }  // NOLINT: implicit by design
  explicit Shape(std::span<const int64_t> dims) { assign(dims.begin(), dims.end()); }
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { take(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT: implicit

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return heap_ ? cap_ : kInline; }
  int64_t* data() noexcept { return heap_ ? heap_ : inline_; }
  const int64_t* data() const noexcept { return heap_ ? heap_ : inline_; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  int64_t& operator[](size_t i) noexcept { return data()[i]; }
  const int64_t& operator[](size_t i) const noexcept { return data()[i]; }
  int64_t& front() noexcept { return data()[0]; }
  const int64_t& front() const noexcept { return data()[0]; }
  int64_t& back() noexcept { return data()[size_ - 1]; }
  const int64_t& back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = n;
  }
  void assign(size_t n, int64_t value) {
    clear();
    resize(n, value);
  }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  void push_back(int64_t v) {
    if (size_ == capacity()) grow(std::max<size_t>(2 * capacity(), kInline));
    data()[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() noexcept { --size_; }

  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t{1}, v); }
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    const size_t at = make_gap(pos, n);
    std::fill(data() + at, data() + at + n, v);
    return data() + at;
  }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    // Copied first: [first, last) may point into this shape.
    Shape tmp(first, last);
    const size_t at = make_gap(pos, tmp.size());
    std::copy(tmp.begin(), tmp.end(), data() + at);
    return data() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> dims) {
    return insert(pos, dims.begin(), dims.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t a = static_cast<size_t>(first - begin()), b = static_cast<size_t>(last - begin());
    std::copy(data() + b, data() + size_, data() + a);
    size_ -= b - a;
    return data() + a;
  }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend auto operator<=>(const Shape& a, const Shape& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void grow(size_t n) {
    int64_t* p = new int64_t[n];
    std::copy(begin(), end(), p);
    delete[] heap_;
    heap_ = p;
    cap_ = n;
  }
  // Opens n slots at pos; returns the index of the first.
  size_t make_gap(const_iterator pos, size_t n) {
    const size_t at = static_cast<size_t>(pos - begin());
    reserve(size_ + n);
    std::copy_backward(data() + at, data() + size_, data() + size_ + n);
    size_ += n;
    return at;
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    cap_ = 0;
    size_ = 0;
  }
  // Moves o's dims here (this holds none) and leaves o empty.
  void take(Shape& o) noexcept {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = 0;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }

  int64_t* heap_ = nullptr;  // null while the dims fit inline_
  size_t size_ = 0;
  size_t cap_ = 0;  // heap_'s capacity
  int64_t inline_[kInline] = {};
};

}  // namespace dlrt
