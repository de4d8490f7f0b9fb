locals {
  a = b + 1
  b = c + 1
  c = a + 1
}
