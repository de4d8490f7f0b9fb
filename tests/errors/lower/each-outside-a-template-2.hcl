resources xs {
  for_each = [1]
  locals {
    k = each.key
  }
  template {
    body = {}
  }
}
