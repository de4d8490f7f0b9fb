function f {
  body = each.key
}
