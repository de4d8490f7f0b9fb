resource x {
  body = { n = each.key }
}
