import { Button, Card, Group, NumberInput, Radio, Stack, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { DEFAULT_PASS_PERCENT, freshId, typed, type Activity, type Question } from '../../common/definition';
import { NO_PROBLEMS, type ProblemOf } from '../../common/problems';

const QUESTIONS_MAX = 50;
const OPTIONS_MAX = 10;

/** A quiz: its pass mark and questions, each with its answers and the correct one (the API holds one per question). */
export function QuizEditor({ activity, onChange, disabled, problemOf = NO_PROBLEMS }: { activity: Activity; onChange: (activity: Activity) => void; disabled: boolean; problemOf?: ProblemOf }) {
  const { t } = useTranslation();
  const questions = activity.questions ?? [];
  const setQuestion = (index: number, question: Question) => onChange({ ...activity, questions: questions.map((q, i) => (i === index ? question : q)) });
  return (
    <Stack gap="sm">
      <NumberInput
        label={t('engagements.quiz.passMark')}
        description={t('engagements.quiz.passMarkHelp')}
        clampBehavior="none"
        suffix="%"
        allowDecimal={false}
        w={220}
        value={activity.pass_percent === undefined ? DEFAULT_PASS_PERCENT : Number.isNaN(activity.pass_percent) ? '' : activity.pass_percent}
        onChange={(value) => onChange({ ...activity, pass_percent: typed(value) })}
        error={problemOf('/pass_percent')}
        disabled={disabled}
      />
      {questions.map((question, index) => (
        <Card withBorder key={index} p="sm" data-testid={`question-${question.id}`}>
          <Stack gap="xs">
            <Group justify="space-between">
              <Title order={4} size="h6">
                {t('engagements.quiz.question', { n: index + 1 })}
              </Title>
              {!disabled && questions.length > 1 && (
                <Button variant="outline" color="red.9" size="compact-sm" onClick={() => onChange({ ...activity, questions: questions.filter((_q, i) => i !== index) })}>
                  {t('engagements.quiz.removeQuestion', { n: index + 1 })}
                </Button>
              )}
            </Group>
            <Textarea
              label={t('engagements.quiz.text', { n: index + 1 })}
              autosize
              minRows={1}
              value={question.text}
              onChange={(e) => setQuestion(index, { ...question, text: e.currentTarget.value })}
              error={problemOf(`/questions/${index}/text`)}
              disabled={disabled}
            />
            <Radio.Group
              label={t('engagements.quiz.answers')}
              description={t('engagements.quiz.answersHelp')}
              value={String(question.correct_option)}
              onChange={(value) => setQuestion(index, { ...question, correct_option: Number(value) })}
            >
              <Stack gap={6} mt={4}>
                {question.options.map((option, o) => (
                  <Group key={o} gap="xs" wrap="nowrap">
                    <Radio value={String(o)} aria-label={t('engagements.quiz.correctOf', { n: o + 1, q: index + 1 })} disabled={disabled} />
                    <TextInput
                      aria-label={t('engagements.quiz.answerOf', { n: o + 1, q: index + 1 })}
                      style={{ flex: 1 }}
                      value={option}
                      onChange={(e) => setQuestion(index, { ...question, options: question.options.map((text, i) => (i === o ? e.currentTarget.value : text)) })}
                      error={problemOf(`/questions/${index}/options/${o}`)}
                      disabled={disabled}
                    />
                    {!disabled && question.options.length > 2 && (
                      <Button
                        variant="outline"
                        size="compact-sm"
                        aria-label={t('engagements.quiz.removeAnswer', { n: o + 1, q: index + 1 })}
                        onClick={() =>
                          setQuestion(index, {
                            ...question,
                            options: question.options.filter((_text, i) => i !== o),
                            correct_option: question.correct_option > o ? question.correct_option - 1 : question.correct_option === o ? 0 : question.correct_option,
                          })
                        }
                      >
                        ×
                      </Button>
                    )}
                  </Group>
                ))}
              </Stack>
            </Radio.Group>
            {!disabled && question.options.length < OPTIONS_MAX && (
              <Group>
                <Button variant="default" size="compact-sm" onClick={() => setQuestion(index, { ...question, options: [...question.options, ''] })}>
                  {t('engagements.quiz.addAnswer', { q: index + 1 })}
                </Button>
              </Group>
            )}
          </Stack>
        </Card>
      ))}
      {!disabled && questions.length < QUESTIONS_MAX && (
        <Group>
          <Button
            variant="default"
            size="compact-sm"
            onClick={() => onChange({ ...activity, questions: [...questions, { id: freshId(`q${questions.length + 1}`, questions.map((q) => q.id)), text: '', options: ['', ''], correct_option: 0 }] })}
          >
            {t('engagements.quiz.addQuestion')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
