/* cmocka assertions on the thread's last error message, shared by the tests. */
#ifndef OCISBX_TEST_ASSERT_H
#define OCISBX_TEST_ASSERT_H

/* ocisbx_error_message(ocisbx_error_last()) */
const char *test_last_msg(void);
/* Fails the test (naming both) unless the last error message contains needle. */
void test_assert_msg_has(const char *needle);
/* Fails the test unless the last error message lacks needle (a secret, say). */
void test_assert_msg_lacks(const char *needle);
/* Fails the test unless s is fit for a terminal: no control byte (C0, DEL or
 * C1) and nothing but valid UTF-8. */
void test_assert_clean_text(const char *s);
/* The same on the last error message. */
void test_assert_msg_clean(void);

#endif
