locals {
  a = b
  b = a
}
